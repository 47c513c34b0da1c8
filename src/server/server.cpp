#include "server/server.h"

#include <httplib.h>

#include <condition_variable>
#include <deque>
#include <fmt/format.h>
#include <mutex>
#include <thread>
#include <vector>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "report/model_page.h"
#include "server/api.h"
#include "server/web_assets.h"

namespace vc::server {
namespace {

constexpr const char* kJson = "application/json; charset=utf-8";

// A fixed pool whose queue of accepted connections is bounded: when it is full the accept loop
// waits, so a flood of connections backs up in the kernel's listen queue, not in our memory.
class BoundedPool : public httplib::TaskQueue {
 public:
  BoundedPool(std::size_t threads, std::size_t max_queued) : max_queued_(max_queued) {
    for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return queue_.size() < max_queued_ || shutdown_; });
    queue_.push_back(std::move(fn));
    ready_.notify_one();
  }
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      shutdown_ = true;
    }
    ready_.notify_all();
    room_.notify_all();
    for (auto& w : workers_) w.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return !queue_.empty() || shutdown_; });
        if (queue_.empty()) return;  // shut down and drained
        fn = std::move(queue_.front());
        queue_.pop_front();
        room_.notify_one();
      }
      fn();
    }
  }
  std::size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> workers_;
  bool shutdown_ = false;
};

// Each request is handled start to finish on one worker thread, so its start time lives here.
thread_local std::chrono::steady_clock::time_point request_start;

void answer_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJson);
}

void handle_api(const httplib::Request& req, httplib::Response& res) {
  const std::string verb = req.matches[1];
  try {
    RequestParams params;
    if (req.method == "POST") {
      // Content type first: httplib reads a form-encoded body into req.params.
      const std::string type = req.get_header_value("Content-Type");
      if (!type.empty() && type.rfind("application/json", 0) != 0) {
        return answer_json(res, 415, error_body("Content-Type", fmt::format("'{}' is not accepted; send application/json", type.substr(0, 64))));
      }
      if (!req.params.empty()) {
        return answer_json(res, 400, error_body("query", "send parameters either in the query string (GET) or in the JSON body (POST), not both"));
      }
      params = RequestParams::from_json_body(req.body);
    } else {
      std::vector<std::pair<std::string, std::string>> pairs(req.params.begin(), req.params.end());
      params = RequestParams::from_pairs(pairs);
    }
    ApiAnswer a = call_api(verb, params);
    answer_json(res, a.status, a.body);
  } catch (const InputError& e) {
    std::string message = e.what();
    if (message.rfind(e.subject() + ": ", 0) == 0) message = message.substr(e.subject().size() + 2);
    answer_json(res, 400, error_body(e.subject(), message));
  }
}

void handle_model_page(const httplib::Request& req, httplib::Response& res) {
  std::string id = req.matches[1];
  PageFormat format = PageFormat::Html;
  if (id.size() > 3 && id.substr(id.size() - 3) == ".md") {
    format = PageFormat::Markdown;
    id.resize(id.size() - 3);
  }
  const Model* m = Catalogue::builtin().find(id);
  if (!m && format == PageFormat::Html) {
    res.status = 404;
    return res.set_content(render_missing_model_html(id, Catalogue::builtin().models()), "text/html; charset=utf-8");
  }
  if (!m) return answer_json(res, 404, error_body("model", "'" + id + "' is not in the catalogue; accepted: " + Catalogue::builtin().ids()));
  res.set_content(render_model_page(*m, format), format == PageFormat::Html ? "text/html; charset=utf-8" : "text/markdown; charset=utf-8");
}

void serve_asset(const std::string& path, httplib::Response& res) {
  auto a = web_assets::find(path);
  if (!a) return answer_json(res, 404, error_body("path", "no such page"));
  res.set_header("Cache-Control", "no-cache");
  res.set_content(std::string(a->body), a->content_type);
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  httplib::Server http;
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  auto& http = impl_->http;
  const auto& o = impl_->options;
  const std::size_t threads = o.threads == 0 ? 1 : o.threads;
  const std::size_t max_queued = o.max_queued == 0 ? 1 : o.max_queued;
  http.new_task_queue = [threads, max_queued] { return new BoundedPool(threads, max_queued); };
  http.set_payload_max_length(o.max_body_bytes);
  http.set_read_timeout(o.read_timeout);
  http.set_write_timeout(o.write_timeout);
  // httplib works a connection on one thread until it closes: short keep-alive so idle browser
  // connections do not hold the pool.
  http.set_tcp_nodelay(true);  // headers and body go out in separate writes: no 40 ms Nagle/delayed-ACK stall
  http.set_keep_alive_max_count(100);
  http.set_keep_alive_timeout(2);
  (void)Catalogue::builtin();  // load the catalogue now, not inside the first request

  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response& res) {
    request_start = std::chrono::steady_clock::now();
    res.set_header("X-Content-Type-Options", "nosniff");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& res) { serve_asset("index.html", res); });
  http.Get(R"(/(app\.js|style\.css))", [](const httplib::Request& req, httplib::Response& res) { serve_asset(req.matches[1], res); });
  http.Get(R"(/api/([a-z-]{1,32}))", handle_api);
  http.Post(R"(/api/([a-z-]{1,32}))", handle_api);
  http.Get(R"(/models/([A-Za-z0-9._-]{1,128}))", handle_model_page);
  // Anything the routes did not answer (404, 413 too large, 400 malformed) gets the JSON error shape.
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    const char* why = res.status == 404 ? "no such route; the API is at /api/VERB (estimate, sweep, compare, models, builds, stream, plan, check, devices, inspect)"
                      : res.status == 413 ? "the request body is too large (at most 64 KiB)"
                      : res.status == 405 ? "method not allowed; use GET or POST"
                                          : "the request could not be read";
    res.set_content(error_body(res.status == 413 ? "body" : "request", why), kJson);
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    fmt::print(stderr, "vramcalc serve: internal error: {}\n", what);
    answer_json(res, 500, error_body("server", "internal error; the request was not answered"));
  });
  if (o.log) {
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - request_start).count();
      fmt::print(stderr, "{} {} {} {} {}B {}us\n", req.remote_addr, req.method, req.path.substr(0, 200), res.status, res.body.size(), us);
    });
  }
}

Server::~Server() { stop(); }

int Server::bind() {
  const auto& o = impl_->options;
  if (o.port < 0 || o.port > 65535) throw InputError("--port", "must be from 0 to 65535");
  if (o.port == 0) {
    int port = impl_->http.bind_to_any_port(o.host);
    if (port <= 0) throw InputError("--host", "cannot listen on '" + o.host + "'; give a local address such as 127.0.0.1");
    return port;
  }
  if (!impl_->http.bind_to_port(o.host, o.port)) {
    throw InputError("--port", fmt::format("cannot listen on {}:{} (in use, or not a local address)", o.host, o.port));
  }
  return o.port;
}

void Server::listen() { impl_->http.listen_after_bind(); }

void Server::stop() {
  if (impl_ && impl_->http.is_running()) impl_->http.stop();
}

}  // namespace vc::server
