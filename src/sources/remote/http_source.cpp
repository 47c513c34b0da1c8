#include "sources/remote/http_source.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>

#include "core/checked.h"
#include "core/error.h"

namespace vc {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMaxRange = uint64_t{128} << 20;  // one request never asks for more

thread_local std::optional<Clock::time_point> t_deadline;  // RemoteDeadline of this thread

// Milliseconds this thread's deadline leaves (0 when none is set); throws once it has passed.
long ms_left(const std::string& url) {
  if (!t_deadline) return 0;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*t_deadline - Clock::now()).count();
  if (left <= 0) throw RemoteTimeout(url, "the time allowed for remote reads ran out before this request; try a smaller source or the CLI");
  return static_cast<long>(left);
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Reply {
  long status = 0;
  std::string body;
  uint64_t body_limit = 0;  // the transfer is cut when the body would exceed it
  bool overflowed = false;
  std::string content_range;
  std::string etag;
  Clock::time_point start = Clock::now();
  bool progress_shown = false;
  Clock::time_point last_progress;
  std::string url;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Reply*>(user);
  const size_t len = size * n;
  if (r->body.size() + len > r->body_limit) {
    r->overflowed = true;
    return 0;  // abort: the server is sending more than was asked
  }
  r->body.append(data, len);
  return len;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Reply*>(user);
  const size_t len = size * n;
  std::string line(data, len);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect): forget the old headers
    r->content_range.clear();
    r->etag.clear();
  }
  auto colon = line.find(':');
  if (colon != std::string::npos && colon < 64) {
    std::string key = line.substr(0, colon);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = trim(line.substr(colon + 1));
    if (value.size() > 1024) value.resize(1024);
    if (key == "content-range") r->content_range = value;
    else if (key == "etag" || key == "x-linked-etag") {
      if (key == "x-linked-etag" || r->etag.empty()) r->etag = value;
    }
  }
  return len;
}

int on_progress(void* user, curl_off_t, curl_off_t now_down, curl_off_t, curl_off_t) {
  auto* r = static_cast<Reply*>(user);
  const auto now = Clock::now();
  if (now - r->start > std::chrono::seconds(1) && now - r->last_progress > std::chrono::milliseconds(250)) {
    r->last_progress = now;
    std::fprintf(stderr, "\rvramcalc: reading %s: %.1f MB", r->url.c_str(), static_cast<double>(now_down) / 1e6);
    r->progress_shown = true;
  }
  return 0;
}

// One GET, with a Range header unless `range` is empty; the body is capped at `limit` bytes.
Reply get(const std::string& url, const std::string& range, uint64_t limit) {
  global_init();
  Reply r;
  r.body_limit = limit;
  r.url = url;
  CURL* h = curl_easy_init();
  if (!h) throw std::runtime_error("libcurl: cannot create a handle");
  std::unique_ptr<CURL, void (*)(CURL*)> guard(h, curl_easy_cleanup);
  curl_slist* headers = nullptr;
  std::string auth;
  if (const char* token = std::getenv("HF_TOKEN"); token && *token) {
    auth = std::string("Authorization: Bearer ") + token;
    headers = curl_slist_append(headers, auth.c_str());
  }
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> hguard(headers, curl_slist_free_all);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  if (!range.empty()) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "vramcalc/0.1 (headers only)");
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &r);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 20L);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);  // give up on a stalled server
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  const long left = ms_left(url);
  if (left > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, left);
  CURLcode rc = curl_easy_perform(h);
  if (r.progress_shown) std::fprintf(stderr, "\n");
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
  if (r.overflowed) {
    if (r.status >= 400) return r;  // an error page longer than the range: the status says it all
    if (range.empty()) throw InputError(url, fmt::format("the answer is larger than the {} bytes accepted for it", limit));
    if (r.status == 200) {
      throw InputError(url, "the server ignores HTTP Range requests (it answered 200 with the whole file); vramcalc reads headers only and will not download it");
    }
    throw InputError(url, fmt::format("the server sent more than the {} bytes asked for (HTTP {})", limit, r.status));
  }
  if (rc == CURLE_OPERATION_TIMEDOUT && left > 0) {  // curl's limit was the deadline's time left
    throw RemoteTimeout(url, "no answer within the time allowed for remote reads; the server is slow or unreachable");
  }
  if (rc != CURLE_OK) throw InputError(url, std::string("cannot fetch: ") + curl_easy_strerror(rc));
  return r;
}

Reply get_range(const std::string& url, uint64_t first, uint64_t last, uint64_t limit) {
  return get(url, fmt::format("{}-{}", first, last), limit);
}

[[noreturn]] void fail_status(const std::string& url, long status) {
  if (status == 404) throw InputError(url, "not found (HTTP 404); check the organisation, repository, revision and file name");
  if (status == 401 || status == 403) throw InputError(url, fmt::format("access denied (HTTP {}); for gated or private repositories set HF_TOKEN", status));
  if (status == 416) throw InputError(url, "the server refused the byte range (HTTP 416): the file is shorter than its header says");
  throw InputError(url, fmt::format("unexpected HTTP status {}", status));
}

// "bytes 0-0/12345" -> 12345.
uint64_t total_from_content_range(const std::string& url, const std::string& cr) {
  auto slash = cr.find('/');
  if (cr.rfind("bytes ", 0) != 0 || slash == std::string::npos || slash + 1 >= cr.size() || cr.size() - slash > 21) {
    throw InputError(url, "the server answered a Range request without a usable Content-Range ('" + cr + "')");
  }
  uint64_t total = 0;
  for (size_t i = slash + 1; i < cr.size(); ++i) {
    if (cr[i] < '0' || cr[i] > '9') throw InputError(url, "Content-Range has no total size ('" + cr + "')");
    total = checked_add(checked_mul(total, 10), static_cast<uint64_t>(cr[i] - '0'));
  }
  return total;
}

std::string cache_key(const std::string& url, const std::string& etag, uint64_t offset, uint64_t n) {
  // FNV-1a 64 over the identifying text: stable across runs and platforms.
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : url + '\n' + etag + '\n' + std::to_string(offset) + '\n' + std::to_string(n)) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}-{}-{}", h, offset, n);
}

class HttpSource final : public ByteSource {
 public:
  explicit HttpSource(std::string url) : url_(std::move(url)) {
    Reply r = get_range(url_, 0, 0, 1);
    if (r.status == 200) {
      throw InputError(url_, "the server ignores HTTP Range requests (it answered 200 to a 1-byte range); vramcalc reads headers only and will not download the whole file");
    }
    if (r.status != 206) fail_status(url_, r.status);
    size_ = total_from_content_range(url_, r.content_range);
    etag_ = r.etag;
    fetched_ += r.body.size();
  }
  const std::string& label() const override { return url_; }
  uint64_t size() const override { return size_; }
  uint64_t bytes_fetched() const override { return fetched_; }
  uint64_t preferred_chunk() const override { return uint64_t{1} << 20; }

  void read_at(uint64_t offset, char* dst, uint64_t n) override {
    if (offset > size_ || n > size_ - offset) {
      throw InputError(url_, fmt::format("is truncated: needs bytes up to {} but the server reports {} bytes", checked_add(offset, n), size_));
    }
    if (n == 0) return;
    if (n > kMaxRange) throw InputError(url_, "a header read of more than 128 MiB was refused");
    const fs::path cached = cache_path(offset, n);
    if (!cached.empty()) {
      std::ifstream in(cached, std::ios::binary);
      if (in && in.read(dst, static_cast<std::streamsize>(n)) && static_cast<uint64_t>(in.gcount()) == n) return;
    }
    Reply r = get_range(url_, offset, offset + n - 1, n);
    if (r.status == 200) throw InputError(url_, "the server stopped honouring Range requests (HTTP 200); not downloading the whole file");
    if (r.status != 206) fail_status(url_, r.status);
    if (r.body.size() != n) throw InputError(url_, fmt::format("the server sent {} bytes for a range of {}", r.body.size(), n));
    fetched_ += n;
    std::copy(r.body.begin(), r.body.end(), dst);
    if (!cached.empty()) write_cache_file(cached.string(), r.body);
  }

 private:
  // Only ranges of a resource with an ETag are cached: without one, staleness cannot be seen.
  fs::path cache_path(uint64_t offset, uint64_t n) const {
    if (etag_.empty()) return {};
    const std::string dir = http_cache_dir();
    if (dir.empty()) return {};
    return fs::path(dir) / cache_key(url_, etag_, offset, n);
  }

  std::string url_;
  std::string etag_;
  uint64_t size_ = 0;
  uint64_t fetched_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> open_http_source(const std::string& url) { return std::make_unique<HttpSource>(url); }

std::string http_get_text(const std::string& url, uint64_t max_bytes) {
  Reply r = get(url, "", max_bytes);
  if (r.status != 200) fail_status(url, r.status);
  return std::move(r.body);
}

bool http_exists(const std::string& url) {
  Reply r = get_range(url, 0, 0, 1);
  return r.status == 206 || r.status == 200;
}

void write_cache_file(const std::string& where, const std::string& bytes) {
  const fs::path path(where);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return;  // a cache that cannot be written is not an error
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) return;
  }
  fs::rename(tmp, path, ec);
}

std::string http_cache_dir() {
  if (const char* d = std::getenv("VRAMCALC_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/vramcalc";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/vramcalc";
  return "";
}

RemoteDeadline::RemoteDeadline(std::chrono::milliseconds budget) : previous_(t_deadline) {
  const auto end = Clock::now() + budget;
  if (!t_deadline || end < *t_deadline) t_deadline = end;
}

RemoteDeadline::~RemoteDeadline() { t_deadline = previous_; }

}  // namespace vc
