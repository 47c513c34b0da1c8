#pragma once
// The GPU checker: for every model, the best weights tier that fits a box (on the GPUs alone, with
// RAM/SSD offload, or not at all), the largest context that fits there and the decode speed.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace vc {

enum class FitKind { Gpu, Offload, None, Unavailable };  // Unavailable: weights not published
const char* to_string(FitKind k);

// Which of the tiers that fit a model wins, once the fit kind is settled (GPUs alone beat offload):
// Quality: the largest weights; Speed: the fastest decode; Balanced: the largest on the GPUs alone,
// the fastest when weights must be offloaded (offload speed swings by orders of magnitude with size).
enum class CheckPreference { Balanced, Quality, Speed };
CheckPreference parse_check_preference(const std::string& text, const std::string& subject);

struct CheckRow {
  const Model* model = nullptr;
  FitKind fit = FitKind::None;
  std::string tier;            // "native MXFP4", "Q4_K_M", "build UD-IQ1_S"
  std::string quant;           // the --quant that gives this tier ("" for native), for a follow-up plan
  uint64_t weights_bytes = 0;
  uint64_t total_bytes = 0;    // at the checked context: the engine's total (rule: the estimate's)
  std::optional<uint64_t> kv_tokens;      // vLLM / SGLang: the KV pool in tokens
  std::optional<double> max_concurrency;  // vLLM / SGLang: requests of the checked context at once
  std::optional<EngineAnswer> engine;     // the engine's per-device answer when it decided the fit (not rule)
  uint64_t max_context = 0;    // at one sequence, in the same fit
  double decode_tok_s = 0;     // expected (an estimate)
  double decode_low_tok_s = 0, decode_high_tok_s = 0;  // the range measured runs show around it (0: none)
  uint64_t gpu_bytes = 0;      // where the chosen tier lives: on the GPUs, in RAM, streamed from SSD
  uint64_t ram_bytes = 0;
  uint64_t ssd_bytes = 0;
  uint64_t tiers_tried = 0;    // distinct tier sizes considered (native, builds, formats)
  uint64_t tiers_fitting = 0;  // of those, how many fit at the chosen fit kind
  std::string note;            // the plan's verdict; for no fit, what it would take
};

// Tiers tried, largest first: those the engine loads (engine_candidate_tiers: native, builds and
// llama.cpp tiers for rule and llama.cpp; native, BF16, FP8 and AWQ/GPTQ for vLLM and SGLang), or
// only base.quant when it is set. GPUs alone first; else GPU + RAM; else with SSD streaming; within
// the first kind that fits, the preference picks the tier.
CheckRow check_model(const Model& model, const Box& box, const PlanOptions& o, const Scenario& base,
                     CheckPreference prefer = CheckPreference::Quality);
// The decode cell of the check table: "-" when nothing runs, else "41.20 (33.1-52.0)" (the range
// with two decimals below 10 tok/s, so a slow tier's range still reads).
std::string decode_cell(const CheckRow& r);

// Ranked: fits on GPUs first, then with offload, then not at all; faster first within each.
std::vector<CheckRow> check_models(const std::vector<Model>& models, const Box& box, const PlanOptions& o, const Scenario& base,
                                   CheckPreference prefer = CheckPreference::Quality);

}  // namespace vc
