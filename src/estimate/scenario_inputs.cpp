#include "estimate/scenario_inputs.h"

#include "core/units.h"

namespace vc {

const std::vector<InputField<ScenarioInputs>>& ScenarioInputs::fields() {
  using S = ScenarioInputs;
  static const std::vector<InputField<S>> table = {
      {"quant", &S::quant, "Weights tier: native (default), a format (Q4_K_M, Q8_0, FP8, BF16, MXFP4 ...) or a build name (UD-IQ1_S)", "-q", false},
      {"context", &S::context, "Context tokens per sequence: 8192, 32K (=32,768), 1M (=1,048,576)", "-c"},
      {"seqs", &S::seqs, "Concurrent sequences", "-s"},
      {"cache-dtype", &S::cache_dtype, "KV cache storage type: f16 (default), bf16, f32, fp8, q8_0, q4_0 ..."},
      {"state-dtype", &S::state_dtype, "Recurrent state layout: f32 (llama.cpp), mixed (vLLM: f32 matrix, 16-bit conv), f16"},
      {"overhead", &S::overhead, "Runtime overhead as a percentage of weights + cache + state"},
      {"overhead-fixed", &S::overhead_fixed, "Fixed overhead added on top, e.g. 2GB"},
      {"latent-values", &S::latent_values, "Values cached per latent (MLA) layer per token; default: what the config implies", "", false},
  };
  return table;
}

Scenario ScenarioInputs::to_scenario() const {
  Scenario s;
  s.quant = quant;
  s.context = parse_tokens(context, "--context");
  s.sequences = parse_count(seqs, "--seqs", 1, kMaxSequences);
  s.cache_dtype = cache_dtype;
  s.state_layout = parse_state_layout(state_dtype, "--state-dtype");
  s.overhead_bp = parse_percent_bp(overhead, "--overhead");
  s.overhead_fixed = parse_bytes(overhead_fixed, "--overhead-fixed");
  if (!latent_values.empty()) s.latent_values = parse_count(latent_values, "--latent-values", 1, kMaxLatentValues);
  s.engine = parse_engine(engine, "--engine");
  return s;
}

}  // namespace vc
