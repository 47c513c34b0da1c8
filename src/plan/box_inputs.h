#pragma once
// The hardware and plan inputs as text, exactly as a user types them (the CLI's --gpu, --ram ...
// flags; the API's gpu, ram ... parameters), with one parser for both faces so they accept and
// refuse the same things. Errors name the CLI flag ("--gpu"); the API reports it bare ("gpu").
#include <string>

#include "core/input_fields.h"
#include "plan/hardware.h"
#include "plan/plan.h"

namespace vc {

struct BoxInputs {
  std::string gpu = "none";
  std::string nodes = "1";
  std::string ram = "0";
  std::string gpu_wired_limit = "default";  // unified devices: the GPU's share (plan/unified_memory.h)
  std::string ram_gbps = "80";
  std::string ssd_gbps = "0";
  std::string split = "layer";
  std::string engine = "rule";
  std::string per_device = "auto";
  std::string efficiency = "60%";
  std::string compute_efficiency = "40%";
  std::string expert_skew = "1.0";
  std::string hot_cache = "off";
  // The engines' speed (src/speed/): a llama.cpp command whose placement to use, --n-cpu-moe,
  // the active experts per token and the CPU sockets reading RAM.
  std::string engine_command;
  std::string n_cpu_moe;
  std::string experts_per_token;
  std::string sockets = "1";
  std::string threads;  // CPU threads (llama.cpp -t); empty: a pasted command's -t, else the engine's default
  // Speculative decoding (speed/speculative.h), only when asked for: these, vLLM's
  // --speculative-config JSON, or the draft flags of a pasted llama.cpp command.
  std::string spec_method;
  std::string spec_tokens;
  std::string spec_acceptance;
  std::string spec_draft;
  std::string spec_config;

  Box to_box() const;
  PlanOptions to_options() const;
  // The scenario a pasted --engine-command implies where no flag set it (its context, sequences and
  // cache dtype: apply_command_to_scenario, as estimate does). plan and check, CLI and API, call this.
  void apply_command(Scenario& scenario, const ScenarioGiven& given) const;
  // Every member above with its name and help: the CLI's flags and the API's parameters.
  static const std::vector<InputField<BoxInputs>>& fields();
};

// The speculative decoding asked for by the spec-* inputs and a pasted llama.cpp command's
// --spec-type draft-mtp / -md / --draft-max (the inputs win); none when nothing asks. A command
// alone that lacks what the estimate needs gets a note in its notes instead of an error.
std::optional<SpeculativeSettings> speculative_inputs(const BoxInputs& in, std::optional<EngineRun>& command);

}  // namespace vc
