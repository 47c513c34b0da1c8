#pragma once
// The scenario flags every estimating sub-command shares, parsed into a Scenario.
#include <CLI/CLI.hpp>
#include <string>

#include "core/units.h"
#include "engines/engine.h"
#include "estimate/scenario_inputs.h"

namespace vc::cli {

// The strings, defaults and parser live in ScenarioInputs (src/estimate/), which the API fills too.
struct ScenarioFlags : ScenarioInputs {
  std::string units = "gb";

  void add_to(CLI::App& app, bool with_context = true);
  ByteUnits byte_units() const { return parse_units(units, "--units"); }
  // Which scenario flags `app` was given: a pasted engine command sets the others.
  static ScenarioGiven given(const CLI::App& app) {
    return {app.count("--context") > 0, app.count("--seqs") > 0, app.count("--cache-dtype") > 0, app.count("--quant") > 0};
  }
};

}  // namespace vc::cli
