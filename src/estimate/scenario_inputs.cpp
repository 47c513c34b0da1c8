#include "estimate/scenario_inputs.h"

#include "core/units.h"

namespace vc {

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
