#pragma once
// The scenario as a user types it (the CLI's --quant, --context ... flags; the API's quant,
// context ... parameters), with its defaults and bounds in one place and one parser for both faces,
// so they accept and refuse the same things. Errors name the CLI flag ("--context"); the API
// reports it bare ("context").
#include <string>

#include "core/input_fields.h"
#include "estimate/scenario.h"

namespace vc {

// --latent-values: at most this many values per latent layer and token (the estimate checks it too).
inline constexpr uint64_t kMaxLatentValues = uint64_t{1} << 20;

struct ScenarioInputs {
  std::string quant;
  std::string context = "8K";
  std::string seqs = "1";
  std::string cache_dtype = "f16";
  std::string state_dtype = "f32";
  std::string overhead = "15%";
  std::string overhead_fixed = "0";
  std::string latent_values;  // empty: what the config implies
  std::string engine = "rule";

  Scenario to_scenario() const;
  // The members above but `engine` (each verb words its own --engine) with names and help: the
  // CLI's flags and the API's parameters.
  static const std::vector<InputField<ScenarioInputs>>& fields();
};

}  // namespace vc
