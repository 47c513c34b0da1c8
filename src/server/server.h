#pragma once
// `vramcalc serve`: the JSON API (api.h), the embedded page (web/) and the generated model pages
// over HTTP. Binds to loopback unless told otherwise, and bounds everything a client controls:
// head and body size, idle time, connections, requests worked on at once, remote reads (count,
// bytes, time, addresses). docs/api.md "Security" says what it promises.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace vc::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0: any free port (tests)
  std::size_t threads = 8;              // API requests computed at once; others wait up to 10 s, then 503
  std::size_t remote_reads = 2;         // /api/inspect reads at once; past it, 503 at once
  std::size_t max_connections = 256;    // open connections (each has a thread); past it, new ones are refused
  std::size_t max_body_bytes = 64 * 1024;
  std::size_t max_head_bytes = 32 * 1024;  // request line and headers of one request (431 past it)
  std::chrono::seconds read_timeout{5};    // a connection idle this long is closed
  uint64_t max_remote_bytes = uint64_t{32} << 20;  // header bytes one /api/inspect may read, all files together
  bool allow_private_sources = false;   // let /api/inspect reach loopback/private addresses (tests, trusted LANs)
  bool lend_hf_token = false;           // DANGEROUS: answer clients' hf: reads with the server's HF_TOKEN
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
