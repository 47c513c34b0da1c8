#pragma once
// The scenario flags every estimating sub-command shares, parsed into a Scenario.
#include <CLI/CLI.hpp>
#include <string>

#include "core/units.h"
#include "estimate/scenario.h"

namespace vc::cli {

struct ScenarioFlags {
  std::string quant;
  std::string context = "8K";
  std::string seqs = "1";
  std::string cache_dtype = "f16";
  std::string state_dtype = "f32";
  std::string overhead = "15%";
  std::string overhead_fixed = "0";
  std::string latent_values;
  std::string units = "gb";

  void add_to(CLI::App& app, bool with_context = true);
  Scenario to_scenario() const;
  ByteUnits byte_units() const { return parse_units(units, "--units"); }
};

}  // namespace vc::cli
