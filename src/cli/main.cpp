// vramcalc: what it takes to run a large language model. Exit codes: 0 success, 2 bad input
// (a flag, file or value; the message names it and what is accepted), 1 internal error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/printable.h"
#include "core/units.h"
#include "sources/remote/http_source.h"
#include "sources/remote/location.h"

namespace {
// Header bytes one run may read from remote sources, all files together: the largest published
// checkpoints' headers are tens of MB.
constexpr uint64_t kCliMaxRemoteBytes = uint64_t{1} << 30;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vramcalc: memory, hardware and speed for running large language models"};
  app.require_subcommand(1);
  app.add_option_function<std::string>("--hf-endpoint", vc::set_hf_endpoint, "Hub endpoint for hf: models (default $VRAMCALC_HF_ENDPOINT or https://huggingface.co)");
  // One deadline and one byte budget for the whole run's remote reads, parsing included: a slow or
  // trickling server cannot hold the CLI without end.
  std::string timeout = "300";
  app.add_option("--timeout", timeout, "Seconds the whole run may spend on remote sources, reading and parsing (default 300)");
  app.fallthrough();  // global options may follow the sub-command
  std::vector<vc::cli::Command> commands;
  // One line per sub-command.
  for (auto add : {
           vc::cli::add_estimate,
           vc::cli::add_sweep,
           vc::cli::add_compare,
           vc::cli::add_models,
           vc::cli::add_builds,
           vc::cli::add_stream,
           vc::cli::add_validate,
           vc::cli::add_page,
           vc::cli::add_serve,
           vc::cli::add_inspect,
           vc::cli::add_plan,
           vc::cli::add_check,
           vc::cli::add_devices,
       }) {
    commands.push_back(add(app));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "vramcalc: {}\nRun 'vramcalc --help' (or 'vramcalc COMMAND --help') for what is accepted.\n", e.what());
    return 2;
  }
  try {
    const uint64_t seconds = vc::parse_count(timeout, "--timeout", 1, 86400);
    vc::RemoteDeadline deadline{std::chrono::seconds(seconds)};
    vc::FetchScope fetch{vc::FetchPolicy{std::nullopt, false, kCliMaxRemoteBytes}};
    for (const auto& c : commands) {
      if (c.app->parsed()) return c.run();
    }
    return 2;
  } catch (const vc::InputError& e) {
    fmt::print(stderr, "vramcalc: {}\n", vc::printable(e.what()));  // may quote a file's bytes
    return 2;
  } catch (const vc::OverflowError& e) {
    fmt::print(stderr, "vramcalc: {} (the inputs are too large to compute exactly)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "vramcalc: internal error: {}\n", e.what());
    return 1;
  }
}
