// vramcalc serve: the JSON API, the calculator page and the model pages over HTTP.
#include <fmt/format.h>

#include <csignal>
#include <thread>

#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"
#include "server/server.h"

namespace vc::cli {
namespace {

// SIGINT/SIGTERM stop the server cleanly: a watcher thread waits for the signal with sigwait, so
// no work happens inside a signal handler.
void stop_on_signals(vc::server::Server& server) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread started after this
  std::thread([set, &server] {
    int sig = 0;
    sigwait(&set, &sig);
    server.stop();
  }).detach();
}

}  // namespace

Command add_serve(CLI::App& app) {
  auto* sub = app.add_subcommand("serve", "Serve the calculator page, the JSON API (/api/VERB) and model pages (/models/ID)");
  struct Opts {
    std::string host = "127.0.0.1";
    int port = 8080;
    std::string threads = "8";
    bool quiet = false;
    bool allow_private = false;
    bool lend_token = false;
    std::string max_remote = "32MiB";
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("--host", o->host, "Address to listen on (loopback unless told otherwise)")->capture_default_str();
  sub->add_option("--port,-p", o->port, "Port (0: any free port, printed on start)")->capture_default_str();
  sub->add_option("--threads", o->threads, "Requests worked on at once")->capture_default_str();
  sub->add_flag("--quiet", o->quiet, "No per-request log lines");
  sub->add_flag("--allow-private-sources", o->allow_private,
                "Let /api/inspect read loopback, private and link-local addresses (off: a client could reach this host's internal network)");
  sub->add_flag("--lend-hf-token", o->lend_token,
                "DANGEROUS: read hf: sources for every client with this server's HF_TOKEN, private repositories included (off: a client sends its own, "
                "Authorization: Bearer TOKEN)");
  sub->add_option("--max-remote-bytes", o->max_remote, "Header bytes one /api/inspect may read, all files together")->capture_default_str();
  return {sub, [o] {
            vc::server::ServerOptions opts;
            opts.host = o->host;
            opts.port = o->port;
            opts.threads = parse_count(o->threads, "--threads", 1, 256);
            opts.log = !o->quiet;
            opts.allow_private_sources = o->allow_private;
            opts.lend_hf_token = o->lend_token;
            opts.max_remote_bytes = parse_bytes(o->max_remote, "--max-remote-bytes");
            if (opts.lend_hf_token) fmt::print(stderr, "vramcalc serve: --lend-hf-token: every client reads hf: sources with this server's HF_TOKEN\n");
            vc::server::Server server(opts);
            const int port = server.bind();
            stop_on_signals(server);
            fmt::print(stderr, "vramcalc serve: listening on http://{}:{}/\n", o->host, port);
            std::fflush(stderr);
            server.listen();
            return 0;
          }};
}

}  // namespace vc::cli
