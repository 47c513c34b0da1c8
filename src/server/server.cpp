#include "server/server.h"

// GNU libmicrohttpd (Debian's libmicrohttpd-dev 0.9.75): it bounds each connection's request head
// in a fixed memory pool (431 past it), handles pipelined requests in order, serves no Range, and
// checks the request syntax strictly. docs/design-notes.md says why it replaced cpp-httplib.
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "core/error_message.h"
#include "core/printable.h"
#include "report/model_page.h"
#include "server/api.h"
#include "server/caller_files.h"
#include "server/request_guard.h"
#include "server/web_assets.h"
#include "sources/remote/http_source.h"

namespace vc::server {
namespace {

constexpr const char* kJson = "application/json; charset=utf-8";
using Clock = std::chrono::steady_clock;

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = kJson;
  std::vector<std::pair<std::string, std::string>> headers;
  bool close = false;  // the request body may be unread: end the connection after answering
};

Reply json_reply(int status, const std::string& body) { return {status, body, kJson, {}, false}; }
Reply error_reply(int status, const std::string& field, const std::string& message) { return json_reply(status, error_body(field, message)); }

// What one request carries between MHD's calls of the access handler.
struct RequestState {
  Clock::time_point start = Clock::now();
  std::string body;
  bool refused = false;    // an answer was queued before the body was read
  std::optional<Refusal> after_body;  // a 413 answered once the (dropped) body is read, so it arrives intact
};

// A body over the limit but under this is read and dropped before the 413: answering before
// reading it would close the connection on unread bytes, and the client would see a reset, not
// the answer. Larger ones are refused at once.
constexpr std::size_t kMaxDiscardedBody = std::size_t{1} << 20;

// A counting gate: at most `limit` holders at once; try_enter never waits.
class Gate {
 public:
  explicit Gate(std::size_t limit) : limit_(limit) {}
  bool try_enter() {
    std::size_t now = held_.load();
    while (now < limit_) {
      if (held_.compare_exchange_weak(now, now + 1)) return true;
    }
    return false;
  }
  void leave() { --held_; }

 private:
  std::size_t limit_;
  std::atomic<std::size_t> held_{0};
};

// Waits up to `patience` for a place; for the computing routes, so a burst queues briefly instead
// of being refused, and a flood is refused instead of queueing without end.
class WaitingGate {
 public:
  explicit WaitingGate(std::size_t limit) : limit_(limit) {}
  bool enter(std::chrono::milliseconds patience) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, patience, [&] { return held_ < limit_; })) return false;
    ++held_;
    return true;
  }
  void leave() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --held_;
    }
    cv_.notify_one();
  }

 private:
  std::size_t limit_;
  std::size_t held_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
};

std::string header(MHD_Connection* c, const char* name) {
  const char* v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
  return v ? v : "";
}

std::size_t header_count(MHD_Connection* c, const char* name) {
  struct Count {
    const char* name;
    std::size_t n = 0;
  } count{name};
  MHD_get_connection_values(c, MHD_HEADER_KIND, [](void* cls, MHD_ValueKind, const char* key, const char*) -> MHD_Result {
    auto* k = static_cast<Count*>(cls);
    if (strcasecmp(key, k->name) == 0) ++k->n;
    return MHD_YES;
  }, &count);
  return count.n;
}

std::vector<std::pair<std::string, std::string>> query_pairs(MHD_Connection* c) {
  std::vector<std::pair<std::string, std::string>> pairs;
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, [](void* cls, MHD_ValueKind, const char* key, const char* value) -> MHD_Result {
    auto* out = static_cast<std::vector<std::pair<std::string, std::string>>*>(cls);
    if (out->size() > 64) return MHD_NO;  // RequestParams refuses past 32 anyway
    out->emplace_back(key ? key : "", value ? value : "");
    return MHD_YES;
  }, &pairs);
  return pairs;
}

// Query strings use '+' for a space (HTML forms, URLSearchParams); MHD's own unescaping does not.
size_t unescape_query(void*, MHD_Connection*, char* s) {
  for (char* p = s; *p; ++p) if (*p == '+') *p = ' ';
  return MHD_http_unescape(s);
}

Reply serve_asset(const std::string& path) {
  auto a = web_assets::find(path);
  if (!a) return error_reply(404, "path", "no such page");
  Reply r{200, std::string(a->body), std::string(a->content_type), {{"Cache-Control", "no-cache"}}, false};
  return r;
}

Reply model_page(std::string id) {
  PageFormat format = PageFormat::Html;
  if (id.size() > 3 && id.substr(id.size() - 3) == ".md") {
    format = PageFormat::Markdown;
    id.resize(id.size() - 3);
  }
  const Model* m = Catalogue::builtin().find(id);
  if (!m && format == PageFormat::Html) {
    return {404, render_missing_model_html(id, Catalogue::builtin().models()), "text/html; charset=utf-8", {}, false};
  }
  if (!m) return error_reply(404, "model", "'" + id + "' is not in the catalogue; accepted: " + Catalogue::builtin().ids());
  return {200, render_model_page(*m, format), format == PageFormat::Html ? "text/html; charset=utf-8" : "text/markdown; charset=utf-8", {}, false};
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  int listen_fd = -1;
  int port = 0;
  bool loopback = true;
  MHD_Daemon* daemon = nullptr;
  std::mutex mu;
  std::condition_variable stop_cv;
  bool stopping = false;
  Gate remote_reads;
  WaitingGate computing;

  explicit Impl(ServerOptions o)
      : options(std::move(o)), remote_reads(options.remote_reads == 0 ? 1 : options.remote_reads), computing(options.threads == 0 ? 1 : options.threads) {}

  Reply api(MHD_Connection* c, const std::string& verb, const std::string& method, const RequestState& st);
  Reply route(MHD_Connection* c, const std::string& url, const std::string& method, const RequestState& st);
  static MHD_Result on_request(void* cls, MHD_Connection* c, const char* url, const char* method, const char*, const char* upload, size_t* upload_size, void** state);
  static void on_completed(void* cls, MHD_Connection* c, void** state, MHD_RequestTerminationCode);
  MHD_Result answer(MHD_Connection* c, const std::string& method, const std::string& url, const RequestState& st, const Reply& r);
};

Reply Server::Impl::api(MHD_Connection* c, const std::string& verb, const std::string& method, const RequestState& st) {
  try {
    RequestParams params;
    const auto pairs = query_pairs(c);
    if (method == "POST") {
      const std::string type = header(c, "Content-Type");
      if (!type.empty() && type.rfind("application/json", 0) != 0) {
        return error_reply(415, "Content-Type", fmt::format("'{}' is not accepted; send application/json", type.substr(0, 64)));
      }
      if (!pairs.empty()) return error_reply(400, "query", "send parameters either in the query string (GET) or in the JSON body (POST), not both");
      params = RequestParams::from_json_body(st.body);
    } else {
      params = RequestParams::from_pairs(pairs);
    }
    // Remote reads are few at once (each may hold memory and a connection for seconds); the
    // other routes only compute, and wait briefly for one of the computing places.
    const bool remote = reads_remote(verb, params);
    if (remote && !remote_reads.try_enter()) {
      Reply busy = error_reply(503, "server", fmt::format("{} remote reads are in progress, the most this server runs at once; retry shortly", options.remote_reads));
      busy.headers.emplace_back("Retry-After", "5");
      return busy;
    }
    if (!remote && !computing.enter(std::chrono::seconds(10))) {
      Reply busy = error_reply(503, "server", "every computing place stayed busy for 10 s; retry shortly");
      busy.headers.emplace_back("Retry-After", "5");
      return busy;
    }
    struct Leave {
      Impl* impl;
      bool remote;
      ~Leave() { remote ? impl->remote_reads.leave() : impl->computing.leave(); }
    } leave{this, remote};
    // The server's own HF_TOKEN is not lent to API clients: a client sends its own as
    // "Authorization: Bearer TOKEN", or the operator opts in with --lend-hf-token.
    FetchPolicy policy;
    policy.token = bearer_token(header(c, "Authorization"));
    if (policy.token->empty() && options.lend_hf_token) policy.token.reset();  // HF_TOKEN, as the CLI would
    policy.public_addresses_only = !options.allow_private_sources;
    policy.max_bytes = options.max_remote_bytes;
    FetchScope scope(policy);
    ApiAnswer a = call_api(verb, params);
    return json_reply(a.status, a.body);
  } catch (const InputError& e) {
    const std::string message = message_of(e);
    return error_reply(400, e.subject(), message);
  }
}

Reply Server::Impl::route(MHD_Connection* c, const std::string& url, const std::string& method, const RequestState& st) {
  static const std::regex api_path(R"(/api/([a-z-]{1,32}))");
  static const std::regex asset_path(R"(/(app\.js|style\.css))");
  static const std::regex page_path(R"(/models/([A-Za-z0-9._-]{1,128}))");
  std::smatch m;
  if (std::regex_match(url, m, api_path)) return api(c, m[1], method, st);
  if (method != "GET" && method != "HEAD") return error_reply(405, "request", "method not allowed; use GET (POST for /api/VERB)");
  if (url == "/") return serve_asset("index.html");
  if (std::regex_match(url, m, asset_path)) return serve_asset(m[1]);
  if (std::regex_match(url, m, page_path)) return model_page(m[1]);
  return error_reply(404, "request", "no such route; the API is at /api/VERB (estimate, sweep, compare, models, builds, stream, plan, check, devices, inspect)");
}

MHD_Result Server::Impl::answer(MHD_Connection* c, const std::string& method, const std::string& url, const RequestState& st, const Reply& r) {
  MHD_Response* res = MHD_create_response_from_buffer(r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
  if (!res) return MHD_NO;
  MHD_add_response_header(res, "Content-Type", r.content_type.c_str());
  MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(res, "X-Frame-Options", "DENY");
  MHD_add_response_header(res, "Referrer-Policy", "no-referrer");
  for (const auto& [k, v] : r.headers) MHD_add_response_header(res, k.c_str(), v.c_str());
  if (r.close) MHD_add_response_header(res, "Connection", "close");
  const MHD_Result ok = MHD_queue_response(c, static_cast<unsigned>(r.status), res);
  MHD_destroy_response(res);
  if (options.log) {
    std::string addr = "-";
    if (const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS); info && info->client_addr) {
      char text[INET6_ADDRSTRLEN] = "";
      const sockaddr* sa = info->client_addr;
      if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
      else if (sa->sa_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text);
      addr = text;
    }
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - st.start).count();
    fmt::print(stderr, "{} {} {} {} {}B {}us\n", addr, printable(method.substr(0, 16)), printable(url.substr(0, 200)), r.status, r.body.size(), us);
  }
  return ok;
}

MHD_Result Server::Impl::on_request(void* cls, MHD_Connection* c, const char* url_c, const char* method_c, const char*, const char* upload,
                                    size_t* upload_size, void** state_slot) {
  auto* impl = static_cast<Impl*>(cls);
  const std::string url = url_c ? url_c : "";
  const std::string method = method_c ? method_c : "";
  auto* st = static_cast<RequestState*>(*state_slot);
  if (!st) {  // the request head has arrived; the body (if any) comes in the next calls
    st = new RequestState;
    *state_slot = st;
    RequestHead head;
    head.method = method;
    head.path = url;
    head.host = header(c, "Host");
    head.origin = header(c, "Origin");
    head.fetch_site = header(c, "Sec-Fetch-Site");
    head.content_length = header(c, "Content-Length");
    head.content_length_count = header_count(c, "Content-Length");
    head.transfer_encoding_count = header_count(c, "Transfer-Encoding");
    head.host_count = header_count(c, "Host");
    const HostPolicy hosts{impl->loopback, impl->port, impl->options.host};
    auto refusal = check_request_head(head, hosts, impl->options.max_body_bytes);
    if (refusal && refusal->status == 413 && std::stoull(head.content_length) <= kMaxDiscardedBody) {
      st->after_body = refusal;
      return MHD_YES;
    }
    if (refusal) {
      st->refused = true;
      Reply r = error_reply(refusal->status, refusal->field, refusal->message);
      r.close = true;
      return impl->answer(c, method, url, *st, r);
    }
    return MHD_YES;
  }
  if (st->refused) {  // answered already; whatever body follows is dropped with the connection
    *upload_size = 0;
    return MHD_YES;
  }
  if (*upload_size != 0) {
    if (st->after_body) {
      *upload_size = 0;
      return MHD_YES;
    }
    if (st->body.size() + *upload_size > impl->options.max_body_bytes) return MHD_NO;  // Content-Length lied: cut
    st->body.append(upload, *upload_size);
    *upload_size = 0;
    return MHD_YES;
  }
  Reply r;
  if (st->after_body) return impl->answer(c, method, url, *st, error_reply(st->after_body->status, st->after_body->field, st->after_body->message));
  try {
    r = impl->route(c, url, method, *st);
  } catch (const std::exception& e) {
    fmt::print(stderr, "vramcalc serve: internal error: {}\n", printable(e.what()));
    r = error_reply(500, "server", "internal error; the request was not answered");
  }
  return impl->answer(c, method, url, *st, r);
}

void Server::Impl::on_completed(void*, MHD_Connection*, void** state_slot, MHD_RequestTerminationCode) {
  delete static_cast<RequestState*>(*state_slot);
  *state_slot = nullptr;
}

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  (void)Catalogue::builtin();  // load the catalogue now, not inside the first request
}

Server::~Server() {
  stop();
  if (impl_->daemon) MHD_stop_daemon(impl_->daemon);
  if (impl_->listen_fd >= 0 && !impl_->daemon) ::close(impl_->listen_fd);
}

int Server::bind() {
  const auto& o = impl_->options;
  if (o.port < 0 || o.port > 65535) throw InputError("--port", "must be from 0 to 65535");
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string host = o.host == "localhost" ? "127.0.0.1" : o.host;
  if (getaddrinfo(host.c_str(), std::to_string(o.port).c_str(), &hints, &found) != 0 || !found) {
    throw InputError("--host", "cannot listen on '" + o.host + "'; give a local address such as 127.0.0.1");
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(found, freeaddrinfo);
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw InputError("--host", "cannot open a socket for '" + o.host + "'");
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
    ::close(fd);
    if (o.port == 0) throw InputError("--host", "cannot listen on '" + o.host + "'; give a local address such as 127.0.0.1");
    throw InputError("--port", fmt::format("cannot listen on {}:{} (in use, or not a local address)", o.host, o.port));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  impl_->port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  impl_->listen_fd = fd;
  impl_->loopback = is_loopback_host(o.host);
  return impl_->port;
}

void Server::listen() {
  auto& impl = *impl_;
  const auto& o = impl.options;
  if (impl.listen_fd < 0) bind();
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_SUPPRESS_DATE_NO_CLOCK;
  impl.daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &Impl::on_request, &impl,
      MHD_OPTION_LISTEN_SOCKET, impl.listen_fd,
      MHD_OPTION_CONNECTION_LIMIT, static_cast<unsigned>(o.max_connections),
      MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(o.read_timeout.count()),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<size_t>(o.max_head_bytes),
      MHD_OPTION_STRICT_FOR_CLIENT, 1,
      MHD_OPTION_UNESCAPE_CALLBACK, &unescape_query, nullptr,
      MHD_OPTION_NOTIFY_COMPLETED, &Impl::on_completed, nullptr,
      MHD_OPTION_END);
  if (!impl.daemon) throw InputError("--port", fmt::format("cannot serve on {}:{}", o.host, impl.port));
  std::unique_lock<std::mutex> lock(impl.mu);
  impl.stop_cv.wait(lock, [&] { return impl.stopping; });
  lock.unlock();
  MHD_stop_daemon(impl.daemon);  // closes the listening socket, joins every connection's thread
  impl.daemon = nullptr;
  impl.listen_fd = -1;
}

void Server::stop() {
  if (!impl_) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
}

}  // namespace vc::server
