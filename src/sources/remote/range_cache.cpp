#include "sources/remote/range_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/units.h"

namespace vc {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'v', 'c', 'r', 'a', 'n', 'g', 'e', '1'};
constexpr std::size_t kHead = 8 + 8 + 8;  // magic, length, FNV-1a 64 of the bytes

// FNV-1a 64: stable across runs and platforms; it catches truncation, edits and corruption of an
// entry (the folder's 0700 keeps other users from writing one).
uint64_t fnv1a(const char* data, std::size_t n, uint64_t h = 1469598103934665603ull) {
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

std::string key(const std::string& url, const std::string& etag, uint64_t offset, uint64_t n) {
  const std::string id = url + '\n' + etag + '\n' + std::to_string(offset) + '\n' + std::to_string(n);
  return fmt::format("{:016x}-{}-{}", fnv1a(id.data(), id.size()), offset, n);
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

bool write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w <= 0) return false;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Removes the least recently used entries until the folder holds at most 90% of the cap.
void evict(const fs::path& dir, uint64_t cap) {
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const uint64_t size = e.file_size(ec);
    entries.push_back({e.path(), size, e.last_write_time(ec)});
    total += size;
  }
  if (total <= cap) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const auto& e : entries) {
    if (total <= cap / 10 * 9) break;
    if (fs::remove(e.path, ec)) total -= e.size;
  }
}

}  // namespace

std::string range_cache_dir() {
  if (const char* d = std::getenv("VRAMCALC_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/vramcalc";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/vramcalc";
  return "";
}

uint64_t range_cache_max() {
  const char* v = std::getenv("VRAMCALC_CACHE_MAX");
  if (!v || !*v) return uint64_t{1} << 30;
  return std::string(v) == "0" ? 0 : parse_bytes(v, "VRAMCALC_CACHE_MAX");
}

std::optional<std::string> range_cache_get(const std::string& url, const std::string& etag, uint64_t offset, uint64_t n) {
  const std::string dir = range_cache_dir();
  if (dir.empty() || range_cache_max() == 0) return std::nullopt;
  const fs::path path = fs::path(dir) / key(url, etag, offset, n);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string stored(kHead + n, '\0');
  std::size_t got = 0;
  while (got < stored.size()) {
    const ssize_t r = ::read(fd, stored.data() + got, stored.size() - got);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  char extra = 0;
  const bool longer = ::read(fd, &extra, 1) > 0;
  ::close(fd);
  const char* p = stored.data();
  const bool intact = got == stored.size() && !longer && std::memcmp(p, kMagic, 8) == 0 && get_u64(p + 8) == n &&
                      get_u64(p + 16) == fnv1a(p + kHead, n);
  std::error_code ec;
  if (!intact) {
    fs::remove(path, ec);  // truncated, edited or from another format: fetch it again
    return std::nullopt;
  }
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used: evicted last
  return stored.substr(kHead);
}

void range_cache_put(const std::string& url, const std::string& etag, uint64_t offset, const std::string& bytes) {
  const std::string dir_text = range_cache_dir();
  const uint64_t cap = dir_text.empty() ? 0 : range_cache_max();
  if (cap == 0 || bytes.size() + kHead > cap) return;
  const fs::path dir(dir_text);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return;
  ::chmod(dir.c_str(), 0700);
  const fs::path path = dir / key(url, etag, offset, bytes.size());
  static std::atomic<uint64_t> writes{0};  // server threads may store the same range at once
  const fs::path tmp = fmt::format("{}.tmp{}-{}", path.string(), ::getpid(), writes++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  std::string head(kMagic, 8);
  put_u64(head, bytes.size());
  put_u64(head, fnv1a(bytes.data(), bytes.size()));
  const bool ok = write_all(fd, head.data(), head.size()) && write_all(fd, bytes.data(), bytes.size());
  ::close(fd);
  if (!ok) {
    fs::remove(tmp, ec);
    return;
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
  evict(dir, cap);
}

}  // namespace vc
