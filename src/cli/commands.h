#pragma once
// Each sub-command registers its flags on the app and returns the action to run once parsed.
#include <CLI/CLI.hpp>
#include <functional>

namespace vc::cli {

struct Command {
  CLI::App* app;
  std::function<int()> run;
};

Command add_estimate(CLI::App& app);
Command add_sweep(CLI::App& app);
Command add_compare(CLI::App& app);
Command add_models(CLI::App& app);
Command add_builds(CLI::App& app);
Command add_stream(CLI::App& app);
Command add_validate(CLI::App& app);
Command add_page(CLI::App& app);
Command add_serve(CLI::App& app);
Command add_inspect(CLI::App& app);
Command add_plan(CLI::App& app);
Command add_check(CLI::App& app);
Command add_devices(CLI::App& app);

}  // namespace vc::cli
