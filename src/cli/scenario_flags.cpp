#include "cli/scenario_flags.h"

#include "core/units.h"

namespace vc::cli {

void ScenarioFlags::add_to(CLI::App& app, bool with_context) {
  app.add_option("--quant,-q", quant, "Weights tier: native (default), a format (Q4_K_M, Q8_0, FP8, BF16, MXFP4 ...) or a build name (UD-IQ1_S)");
  if (with_context) app.add_option("--context,-c", context, "Context tokens per sequence: 8192, 32K (=32,768), 1M (=1,048,576)")->capture_default_str();
  app.add_option("--seqs,-s", seqs, "Concurrent sequences")->capture_default_str();
  app.add_option("--cache-dtype", cache_dtype, "KV cache storage type: f16 (default), bf16, f32, fp8, q8_0, q4_0 ...")->capture_default_str();
  app.add_option("--state-dtype", state_dtype, "Recurrent state layout: f32 (llama.cpp), mixed (vLLM: f32 matrix, 16-bit conv), f16")->capture_default_str();
  app.add_option("--overhead", overhead, "Runtime overhead as a percentage of weights + cache + state")->capture_default_str();
  app.add_option("--overhead-fixed", overhead_fixed, "Fixed overhead added on top, e.g. 2GB")->capture_default_str();
  app.add_option("--latent-values", latent_values, "Values cached per latent (MLA) layer per token; default: what the config implies");
  app.add_option("--units", units, "gb (10^9 bytes, default) or gib (2^30)")->capture_default_str();
}

}  // namespace vc::cli
