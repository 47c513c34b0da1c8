#pragma once
// A local HTTP server for the remote-reading tests (cpp-httplib on 127.0.0.1, a free port):
// serves files from disk by path, answers Range requests through httplib, counts every body
// byte it sends, and can be told to ignore Range (answer 200 with the whole file).
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace vc::testing {

class TestHttpServer {
 public:
  TestHttpServer() {
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response&) {
      if (ignore_range_) const_cast<httplib::Request&>(req).ranges.clear();  // behave like a server without Range support
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server_.Get(R"(/(.*))", [this](const httplib::Request& req, httplib::Response& res) { serve(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~TestHttpServer() {
    server_.stop();
    thread_.join();
  }

  // Serves `file` at URL path `path` ("/org/repo/resolve/main/config.json").
  void add(const std::string& path, const std::filesystem::path& file) {
    std::lock_guard<std::mutex> lock(mu_);
    files_[path] = file;
  }
  // Answers `from` with a 302 to `to` (as the Hub does for LFS files).
  void add_redirect(const std::string& from, const std::string& to) {
    std::lock_guard<std::mutex> lock(mu_);
    redirects_[from] = to;
  }
  std::string last_authorization() {
    std::lock_guard<std::mutex> lock(mu_);
    return authorization_;
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  std::string root() const { return "http://127.0.0.1:" + std::to_string(port_); }
  uint64_t bytes_served() const { return served_; }
  uint64_t requests() const { return requests_; }
  // The most requests that were waiting out the delay at once (concurrent clients).
  uint64_t max_in_flight() const { return max_in_flight_; }
  void ignore_range(bool on) { ignore_range_ = on; }
  // Every answer waits this long first (a slow or stalled server).
  void delay(std::chrono::milliseconds d) { delay_ms_ = d.count(); }

 private:
  void serve(const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    const uint64_t now = ++in_flight_;
    for (uint64_t seen = max_in_flight_; now > seen && !max_in_flight_.compare_exchange_weak(seen, now);) {
    }
    if (delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
    --in_flight_;  // counted while the request waits: the delay stands for the round trip
    std::filesystem::path file;
    {
      std::lock_guard<std::mutex> lock(mu_);
      authorization_ = req.get_header_value("Authorization");
      if (auto r = redirects_.find(req.path); r != redirects_.end()) {
        res.set_redirect(r->second);
        return;
      }
      auto it = files_.find(req.path);
      if (it == files_.end()) {
        res.status = 404;
        res.set_content("not found", "text/plain");
        return;
      }
      file = it->second;
    }
    const uint64_t size = std::filesystem::file_size(file);
    res.set_header("ETag", "\"" + std::to_string(size) + "-" + file.filename().string() + "\"");
    res.set_content_provider(size, "application/octet-stream", [this, file](size_t offset, size_t length, httplib::DataSink& sink) {
      std::ifstream in(file, std::ios::binary);
      in.seekg(static_cast<std::streamoff>(offset));
      std::string buf(std::min<size_t>(length, 64 << 10), '\0');
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      served_ += buf.size();
      return sink.write(buf.data(), buf.size());
    });
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::map<std::string, std::filesystem::path> files_;
  std::map<std::string, std::string> redirects_;
  std::string authorization_;
  std::atomic<uint64_t> served_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> in_flight_{0};
  std::atomic<uint64_t> max_in_flight_{0};
  std::atomic<bool> ignore_range_{false};
  std::atomic<int64_t> delay_ms_{0};
};

}  // namespace vc::testing
