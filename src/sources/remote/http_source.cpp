#include "sources/remote/http_source.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string_view>

#include "core/checked.h"
#include "core/error.h"
#include "sources/remote/location.h"
#include "sources/remote/range_cache.h"

namespace vc {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMaxRange = uint64_t{128} << 20;  // one request never asks for more

thread_local std::optional<Clock::time_point> t_deadline;  // RemoteDeadline of this thread
thread_local bool t_quiet = false;  // a worker of a concurrent set read: no progress line of its own

}  // namespace

struct FetchScope::State {
  FetchPolicy policy;
  std::atomic<uint64_t> bytes_used = 0;  // shared by the workers of a concurrent set read
};

namespace {

thread_local FetchScope::State* t_fetch = nullptr;  // FetchScope of this thread

// Counts `n` header bytes against this thread's FetchPolicy budget.
void charge_bytes(const std::string& url, uint64_t n) {
  if (!t_fetch) return;
  const uint64_t max = t_fetch->policy.max_bytes;
  uint64_t used = t_fetch->bytes_used.load();
  do {
    if (n > max || used > max - n) {
      const std::string limit = max % (uint64_t{1} << 20) == 0 ? fmt::format("{} MiB", max >> 20) : fmt::format("{} bytes", max);
      throw RemoteError(url, fmt::format("this request may read at most {} of headers in all, summed over every file of a split set or index; "
                                        "this source needs more", limit));
    }
  } while (!t_fetch->bytes_used.compare_exchange_weak(used, used + n));
}

// Header bytes this thread's FetchPolicy still allows.
uint64_t bytes_left() {
  return t_fetch ? t_fetch->policy.max_bytes - t_fetch->bytes_used : UINT64_MAX;
}

// scheme://host:port of a URL, lower-cased, by curl's own parser (so userinfo, IPv6 brackets
// and default ports are read as curl will read them); "" when it cannot be parsed.
std::string origin_of(const std::string& url) {
  CURLU* u = curl_url();
  if (!u) return "";
  std::unique_ptr<CURLU, void (*)(CURLU*)> guard(u, curl_url_cleanup);
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return "";
  std::string out;
  for (auto part : {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT}) {
    char* text = nullptr;
    if (curl_url_get(u, part, &text, part == CURLUPART_PORT ? CURLU_DEFAULT_PORT : 0) != CURLUE_OK || !text) return "";
    out += text;
    out += part == CURLUPART_SCHEME ? "://" : part == CURLUPART_HOST ? ":" : "";
    curl_free(text);
  }
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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
  bool public_only = false;
  bool blocked = false;  // a connection to a non-public address was refused
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
  if (!t_quiet && now - r->start > std::chrono::seconds(1) && now - r->last_progress > std::chrono::milliseconds(250)) {
    r->last_progress = now;
    std::fprintf(stderr, "\rvramcalc: reading %s: %.1f MB", r->url.c_str(), static_cast<double>(now_down) / 1e6);
    r->progress_shown = true;
  }
  return 0;
}

// Every connection curl opens (the first, each redirect's, each address it tries) passes here, so
// the address checked is the one connected to: a name that resolves differently later (DNS
// rebinding) or a redirect to a private address cannot get past.
curl_socket_t open_checked_socket(void* user, curlsocktype, curl_sockaddr* a) {
  auto* r = static_cast<Reply*>(user);
  if (r->public_only && is_non_public_address(&a->addr)) {
    r->blocked = true;
    return CURL_SOCKET_BAD;
  }
  return ::socket(a->family, a->socktype, a->protocol);
}

// One GET, with a Range header unless `range` is empty; the body is capped at `limit` bytes. Every
// request (range reads and the Hub's API listing alike) goes through here, so the token, address
// and protocol rules hold for all of them.
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
  if (const std::string token = token_for_url(url); !token.empty()) {
    // curl drops a custom Authorization header when a redirect leaves this scheme, host and port.
    auth = "Authorization: Bearer " + token;
    headers = curl_slist_append(headers, auth.c_str());
  }
  r.public_only = t_fetch && t_fetch->policy.public_addresses_only;
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> hguard(headers, curl_slist_free_all);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  if (!range.empty()) curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");        // no file://, ftp:// ... at all,
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");  // nor through a redirect
  if (r.public_only) {
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_checked_socket);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &r);
    curl_easy_setopt(h, CURLOPT_PROXY, "");  // a proxy would connect on our behalf, unchecked
  }
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
    if (range.empty()) return r;  // a plain GET's caller says which limit was passed
    if (r.status == 200) {
      throw RemoteError(url, "the server ignores HTTP Range requests (it answered 200 with the whole file); vramcalc reads headers only and will not download it");
    }
    throw RemoteError(url, fmt::format("the server sent more than the {} bytes asked for (HTTP {})", limit, r.status));
  }
  if (rc == CURLE_OPERATION_TIMEDOUT && left > 0) {  // curl's limit was the deadline's time left
    throw RemoteTimeout(url, "no answer within the time allowed for remote reads; the server is slow or unreachable");
  }
  if (r.blocked) {
    throw RemoteError(url, "refused: it (or a redirect from it) resolves to a loopback, private, link-local or other non-public address, "
                          "which this server does not read (its operator can allow them with --allow-private-sources)");
  }
  if (rc == CURLE_UNSUPPORTED_PROTOCOL) throw RemoteError(url, "refused: only http:// and https:// are read, redirects included");
  if (rc != CURLE_OK) throw RemoteError(url, std::string("cannot fetch: ") + curl_easy_strerror(rc));
  return r;
}

Reply get_range(const std::string& url, uint64_t first, uint64_t last, uint64_t limit) {
  return get(url, fmt::format("{}-{}", first, last), limit);
}

[[noreturn]] void fail_status(const std::string& url, long status) {
  if (status == 404) throw RemoteError(url, "not found (HTTP 404); check the organisation, repository, revision and file name");
  if (status == 401 || status == 403) throw RemoteError(url, fmt::format("access denied (HTTP {}); gated or private repositories need a Hugging Face token (CLI: HF_TOKEN; API: an Authorization: Bearer header)", status));
  if (status == 416) throw RemoteError(url, "the server refused the byte range (HTTP 416): the file is shorter than its header says");
  throw RemoteError(url, fmt::format("unexpected HTTP status {}", status));
}

// "bytes 0-0/12345" -> 12345.
uint64_t total_from_content_range(const std::string& url, const std::string& cr) {
  auto slash = cr.find('/');
  if (cr.rfind("bytes ", 0) != 0 || slash == std::string::npos || slash + 1 >= cr.size() || cr.size() - slash > 21) {
    throw RemoteError(url, "the server answered a Range request without a usable Content-Range header");
  }
  uint64_t total = 0;
  for (size_t i = slash + 1; i < cr.size(); ++i) {
    if (cr[i] < '0' || cr[i] > '9') throw RemoteError(url, "the server's Content-Range header has no total size");
    total = checked_add(checked_mul(total, 10), static_cast<uint64_t>(cr[i] - '0'));
  }
  return total;
}

// The ETag last seen for a URL, kept in the cache beside its ranges (padded to a fixed length, as
// cache keys name one): a URL read before is probed with one byte and its ranges come from the cache.
constexpr uint64_t kEtagRecord = 256;
const char* const kEtagRecordTag = "etag-record";

std::optional<std::string> remembered_etag(const std::string& url) {
  auto rec = range_cache_get(url + "#etag", kEtagRecordTag, 0, kEtagRecord);
  if (!rec) return std::nullopt;
  return rec->substr(0, rec->find('\0'));
}

void remember_etag(const std::string& url, const std::string& etag) {
  if (etag.empty() || etag.size() >= kEtagRecord || etag.find('\0') != std::string::npos) return;
  std::string rec = etag;
  rec.resize(kEtagRecord, '\0');
  range_cache_put(url + "#etag", kEtagRecordTag, 0, rec);
}

// The first range asked of a URL not read before, which also serves as the Range probe: a GGUF's
// header is megabytes (its tokenizer), and 1 MiB holds enough of it to project the rest
// (gguf_header_outlook.h); a safetensors file, a later part of a split GGUF or a JSON file has a
// header of kilobytes, or declares its length in its first 8 bytes.
uint64_t first_range_for(const std::string& url) {
  const std::string_view path = std::string_view(url).substr(0, url.find('?'));
  const bool gguf = path.size() >= 5 && path.substr(path.size() - 5) == ".gguf";
  const bool later_part = path.find("-00001-of-") == std::string_view::npos && path.find("-of-0") != std::string_view::npos;
  return gguf && !later_part ? uint64_t{1} << 20 : uint64_t{64} << 10;
}

class HttpSource final : public ByteSource {
 public:
  explicit HttpSource(std::string url) : url_(std::move(url)) {
    const std::optional<std::string> seen = remembered_etag(url_);
    const uint64_t first = seen ? 1 : first_range_for(url_);
    Reply r = get_range(url_, 0, first - 1, first);
    if (r.status == 200) {
      throw RemoteError(url_, "the server ignores HTTP Range requests (it answered 200 to a range request); vramcalc reads headers only and will not download the whole file");
    }
    if (r.status != 206) fail_status(url_, r.status);
    size_ = total_from_content_range(url_, r.content_range);
    etag_ = r.etag;
    // RFC 9110 has a range past the end answered up to the end; some servers send the range's full
    // length anyway: bytes past the size they state are dropped.
    if (r.body.size() > size_) r.body.resize(size_);
    if (r.body.size() != std::min(first, size_)) throw RemoteError(url_, fmt::format("the server sent {} bytes for a range of {}", r.body.size(), std::min(first, size_)));
    fetched_ += r.body.size();
    if (!seen || *seen != etag_) {
      // A new or changed file: the first range is the start of the header, kept for its reads.
      charge_bytes(url_, r.body.size());
      prefix_ = std::move(r.body);
      remember_etag(url_, etag_);
    }
  }
  const std::string& label() const override { return url_; }
  uint64_t size() const override { return size_; }
  uint64_t bytes_fetched() const override { return fetched_; }
  uint64_t preferred_chunk() const override { return uint64_t{1} << 20; }

  void read_at(uint64_t offset, char* dst, uint64_t n) override {
    if (offset > size_ || n > size_ - offset) {
      throw RemoteError(url_, fmt::format("is truncated: needs bytes up to {} but the server reports {} bytes", checked_add(offset, n), size_));
    }
    if (n == 0) return;
    if (n > kMaxRange) throw RemoteError(url_, "a header read of more than 128 MiB was refused");
    ms_left(url_);  // the deadline covers parsing too: checked between reads, cache hits included
    // What the first range already holds was charged when it came; the rest is charged here.
    const uint64_t from_prefix = offset < prefix_.size() ? std::min<uint64_t>(n, prefix_.size() - offset) : 0;
    charge_bytes(url_, n - from_prefix);
    // Only ranges of a resource with an ETag are cached: without one, staleness cannot be seen.
    if (!etag_.empty() && from_prefix == 0) {
      if (auto hit = range_cache_get(url_, etag_, offset, n)) {
        std::copy(hit->begin(), hit->end(), dst);
        return;
      }
    }
    std::string bytes = prefix_.substr(offset < prefix_.size() ? offset : 0, from_prefix);
    if (from_prefix < n) {
      const uint64_t first = offset + from_prefix;
      Reply r = get_range(url_, first, offset + n - 1, n - from_prefix);
      if (r.status == 200) throw RemoteError(url_, "the server stopped honouring Range requests (HTTP 200); not downloading the whole file");
      if (r.status != 206) fail_status(url_, r.status);
      if (r.body.size() != n - from_prefix) throw RemoteError(url_, fmt::format("the server sent {} bytes for a range of {}", r.body.size(), n - from_prefix));
      fetched_ += r.body.size();
      bytes += r.body;
    }
    std::copy(bytes.begin(), bytes.end(), dst);
    if (!etag_.empty()) range_cache_put(url_, etag_, offset, bytes);
  }

 private:
  std::string url_;
  std::string etag_;
  std::string prefix_;  // the first range of a file not read before (empty when read from the cache)
  uint64_t size_ = 0;
  uint64_t fetched_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> open_http_source(const std::string& url) { return std::make_unique<HttpSource>(url); }

std::string http_get_text(const std::string& url, uint64_t max_bytes, const std::string& immutable_tag) {
  ms_left(url);
  // A size record beside the body says how long the cached body is (cache keys name a length).
  const std::string size_key = url + "#size";
  if (!immutable_tag.empty()) {
    if (auto size = range_cache_get(size_key, immutable_tag, 0, 8); size && size->size() == 8) {
      uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>((*size)[static_cast<size_t>(i)]);
      if (n <= max_bytes) {
        if (auto hit = range_cache_get(url, immutable_tag, 0, n)) {
          charge_bytes(url, n);
          return std::move(*hit);
        }
      }
    }
  }
  // Read at most one byte past the budget, so an answer over it is refused by charge_bytes' own words.
  const uint64_t budget = bytes_left();
  const bool budget_bound = budget < max_bytes;
  Reply r = get(url, "", budget_bound ? budget + 1 : max_bytes);
  if (r.status != 200) fail_status(url, r.status);
  if (r.overflowed && !budget_bound) throw RemoteError(url, fmt::format("the answer is larger than the {} bytes accepted for it", max_bytes));
  charge_bytes(url, r.overflowed ? budget + 1 : r.body.size());
  if (!immutable_tag.empty()) {
    std::string size;
    for (int i = 0; i < 8; ++i) size += static_cast<char>((uint64_t{r.body.size()} >> (8 * i)) & 0xff);
    range_cache_put(url, immutable_tag, 0, r.body);
    range_cache_put(size_key, immutable_tag, 0, size);
  }
  return std::move(r.body);
}

bool http_exists(const std::string& url) {
  Reply r = get_range(url, 0, 0, 1);
  return r.status == 206 || r.status == 200;
}

FetchScope::FetchScope(FetchPolicy policy) : previous_(t_fetch), state_(new State{std::move(policy), 0}) {
  t_fetch = state_.get();
}

FetchScope::~FetchScope() { t_fetch = previous_; }

bool is_token_text(const std::string& token) {
  if (token.empty() || token.size() > 512) return false;
  for (char c : token) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view("-._~+/=").find(c) == std::string_view::npos) return false;
  }
  return true;
}

std::string token_for_url(const std::string& url) {
  std::string token;
  if (t_fetch && t_fetch->policy.token) token = *t_fetch->policy.token;
  else if (const char* env = std::getenv("HF_TOKEN"); env && *env) token = env;
  if (token.empty() || !is_token_text(token)) return "";
  // Only the configured endpoint's origin: hf_endpoint() is https unless the user set another.
  const std::string endpoint = origin_of(hf_endpoint());
  return !endpoint.empty() && origin_of(url) == endpoint ? token : "";
}

bool is_non_public_address(const sockaddr* addr) {
  auto v4_blocked = [](uint32_t a) {
    const auto in = [a](uint32_t net, int bits) { return (a >> (32 - bits)) == (net >> (32 - bits)); };
    return in(0x00000000, 8) || in(0x0a000000, 8) || in(0x64400000, 10) || in(0x7f000000, 8) || in(0xa9fe0000, 16) ||
           in(0xac100000, 12) || in(0xc0000000, 24) || in(0xc0a80000, 16) || in(0xc6120000, 15) || in(0xe0000000, 4) ||
           in(0xf0000000, 4);
  };
  if (addr->sa_family == AF_INET) return v4_blocked(ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr));
  if (addr->sa_family != AF_INET6) return true;  // only IPv4 and IPv6 are ever expected
  const auto& b = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr.s6_addr;
  const bool mapped = std::all_of(b, b + 10, [](uint8_t x) { return x == 0; }) && b[10] == 0xff && b[11] == 0xff;
  const bool nat64 = b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && std::all_of(b + 4, b + 12, [](uint8_t x) { return x == 0; });
  if (mapped || nat64) return v4_blocked(uint32_t{b[12]} << 24 | uint32_t{b[13]} << 16 | uint32_t{b[14]} << 8 | b[15]);
  const bool unspecified_or_loopback = std::all_of(b, b + 15, [](uint8_t x) { return x == 0; }) && b[15] <= 1;
  const bool unique_local = (b[0] & 0xfe) == 0xfc;
  const bool link_local = b[0] == 0xfe && (b[1] & 0xc0) == 0x80;
  const bool site_local = b[0] == 0xfe && (b[1] & 0xc0) == 0xc0;
  const bool multicast = b[0] == 0xff;
  const bool v4_compatible = std::all_of(b, b + 12, [](uint8_t x) { return x == 0; });
  return unspecified_or_loopback || unique_local || link_local || site_local || multicast || v4_compatible;
}

RemoteDeadline::RemoteDeadline(std::chrono::milliseconds budget) : previous_(t_deadline) {
  const auto end = Clock::now() + budget;
  if (!t_deadline || end < *t_deadline) t_deadline = end;
}

RemoteDeadline::~RemoteDeadline() { t_deadline = previous_; }

RemoteReadContext RemoteReadContext::current() { return RemoteReadContext(t_fetch, t_deadline); }

RemoteReadContext::Adopt::Adopt(const RemoteReadContext& c) : fetch_(t_fetch), deadline_(t_deadline), quiet_(t_quiet) {
  t_fetch = c.fetch_;
  t_deadline = c.deadline_;
  t_quiet = true;
}

RemoteReadContext::Adopt::~Adopt() {
  t_fetch = fetch_;
  t_deadline = deadline_;
  t_quiet = quiet_;
}

}  // namespace vc
