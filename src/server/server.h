#pragma once
// `vramcalc serve`: the JSON API (api.h), the embedded page (web/) and the generated model pages
// over HTTP. Binds to loopback unless told otherwise, and bounds everything a client controls:
// body size, read/write time, keep-alive, and the number of requests worked on at once.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace vc::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0: any free port (tests)
  std::size_t threads = 8;              // requests worked on at once
  std::size_t max_queued = 64;          // accepted connections waiting for a thread; past it, accept waits
  std::size_t max_body_bytes = 64 * 1024;
  std::chrono::seconds read_timeout{5};
  std::chrono::seconds write_timeout{5};
  bool log = true;                      // one line per request on stderr
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; returns the port (the chosen one when options.port is 0).
  // Throws InputError("--host"/"--port", ...) when it cannot bind.
  int bind();
  // Serves until stop() is called (from another thread or a signal handler's thread).
  void listen();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vc::server
