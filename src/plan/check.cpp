#include "plan/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "core/checked.h"
#include "core/error.h"
#include "engines/engine_tiers.h"

#include "core/units.h"

namespace vc {

const char* to_string(FitKind k) {
  switch (k) {
    case FitKind::Gpu: return "gpu";
    case FitKind::Offload: return "offload";
    case FitKind::None: return "none";
    case FitKind::Unavailable: return "unreleased";
  }
  return "none";
}

CheckPreference parse_check_preference(const std::string& text, const std::string& subject) {
  if (text == "balanced") return CheckPreference::Balanced;
  if (text == "quality") return CheckPreference::Quality;
  if (text == "speed") return CheckPreference::Speed;
  throw InputError(subject, "'" + text.substr(0, 64) + "' is not a preference; accepted: balanced, quality, speed");
}

namespace {

// Where the plan puts the chosen tier: all on the GPUs, llama.cpp's own offload (its GPUs and its
// host), or the rule's offload plan's GPU/RAM/SSD shares.
void fill_split(CheckRow& row, const Plan& p) {
  if (row.fit == FitKind::Offload && row.engine) {
    for (const auto& d : row.engine->devices) (d.name == "host" ? row.ram_bytes : row.gpu_bytes) += d.total_bytes;
    return;
  }
  if (row.fit == FitKind::Gpu || !p.offload) {
    row.gpu_bytes = row.total_bytes;
    return;
  }
  for (const auto& t : p.offload->tiers) {
    const uint64_t held = checked_add(checked_add(t.cache, t.weights), t.experts);
    if (t.tier == "GPU") row.gpu_bytes = held;
    else if (t.tier == "RAM") row.ram_bytes = held;
    else row.ssd_bytes = held;
  }
}

// What it would take to run the smallest tier: how far the box is short, and how many of its largest
// card would hold the total (before sharding overhead: a floor, not a plan).
std::string what_it_would_take(const Estimate& e, const Box& box) {
  const uint64_t have = checked_add(box.vram_bytes(), checked_mul(box.ram_bytes, box.nodes));
  std::string out = fmt::format("No tier fits. Even the smallest, {}, needs {} in all", e.weights.tier, format_bytes(e.total_bytes));
  if (have < e.total_bytes) out += fmt::format(", {} more than this box's GPU memory and RAM", format_bytes(e.total_bytes - have));
  const Device* largest = nullptr;
  for (const auto& d : box.gpus) {
    if (!largest || d.memory_bytes > largest->memory_bytes) largest = &d;
  }
  if (largest && largest->memory_bytes) {
    const uint64_t cards = (e.total_bytes + largest->memory_bytes - 1) / largest->memory_bytes;
    out += fmt::format("; at least {} x {} ({} each) would hold it on GPUs", cards, largest->name, format_bytes(largest->memory_bytes));
  }
  out += box.ssd_bandwidth ? "." : "; or give an SSD read speed to stream the weights from disk.";
  return out;
}

// The fewest weight bytes any engine loads for a tier of `tier_bytes`: all but the input embedding
// (llama.cpp keeps it on the host), the vision tower and MTP layers (not every engine loads them),
// each taken at 4 bytes a parameter (F32, the most a tier stores). A tier whose floor exceeds a
// memory cannot fit in it: no engine run is needed to say so.
uint64_t loaded_bytes_floor(const Model& model, uint64_t tier_bytes) {
  if (model.params.by_class.empty()) return 0;  // no breakdown: nothing can be ruled out
  uint64_t aside = 0;
  for (ParamClass c : {ParamClass::Embedding, ParamClass::Vision, ParamClass::Mtp}) {
    if (const auto it = model.params.by_class.find(c); it != model.params.by_class.end()) aside = checked_add(aside, checked_mul(it->second, 4));
  }
  return tier_bytes > aside ? tier_bytes - aside : 0;
}

}  // namespace

std::string decode_cell(const CheckRow& r) {
  if (r.fit == FitKind::None || r.fit == FitKind::Unavailable) return "-";
  if (r.decode_low_tok_s <= 0) return fmt::format("{:.2f}", r.decode_tok_s);
  const int decimals = r.decode_high_tok_s < 10 ? 2 : 1;
  return fmt::format("{:.2f} ({:.{}f}-{:.{}f})", r.decode_tok_s, r.decode_low_tok_s, decimals, r.decode_high_tok_s, decimals);
}

CheckRow check_model(const Model& model, const Box& box, const PlanOptions& o, const Scenario& base, CheckPreference prefer) {
  if (!model.weights_available()) {  // no tier, fit or speed for weights nobody can download
    CheckRow row;
    row.model = &model;
    row.fit = FitKind::Unavailable;
    row.note = fmt::format("{}: {}; no fit or command line until the weights are published", status_text(model.status), model.status_note);
    return row;
  }
  // Candidate tiers, largest weights first, one per distinct size (clamped tiers collapse into native).
  std::vector<std::pair<std::string, uint64_t>> tiers;
  auto add = [&](const std::string& quant) {
    const WeightsFigure w = resolve_weights(model, quant);
    for (const auto& t : tiers) if (t.second == w.bytes) return;
    tiers.emplace_back(quant, w.bytes);
  };
  if (!base.quant.empty()) {
    if (!engine_loads_tier(o.engine, model, base.quant)) {  // the visitor asked for one tier this engine cannot load
      CheckRow row;
      row.model = &model;
      row.tier = resolve_weights(model, base.quant).tier;
      row.quant = base.quant;
      row.note = fmt::format("{} is a GGUF file, which {} does not load; {}", row.tier, to_string(o.engine), engine_tiers_text(o.engine));
      return row;
    }
    add(base.quant);  // the visitor asked for one tier
  } else {
    for (const auto& quant : engine_candidate_tiers(o.engine, model)) add(quant);
  }
  std::stable_sort(tiers.begin(), tiers.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  Scenario s = base;
  resolve_context_from_model(s, model);  // a pasted llama.cpp command without -c: this model's trained context
  if (model.max_context) s.context = std::min(s.context, model.max_context);
  CheckRow row;
  row.model = &model;
  row.tiers_tried = tiers.size();
  const uint64_t limit = model.max_context ? model.max_context : kMaxContextTokens;
  // GPU alone first; then GPU + RAM; streaming from SSD only when nothing fits in memory.
  Box in_memory = box;
  in_memory.ssd_bandwidth = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const FitKind kind = pass == 0 ? FitKind::Gpu : FitKind::Offload;
    if (kind == FitKind::Gpu && box.gpus.empty()) continue;
    if (pass == 2 && !box.ssd_bandwidth) continue;
    const Box& b = pass == 1 ? in_memory : box;
    const bool by_engine = kind == FitKind::Gpu && o.engine != EngineKind::Rule;
    const bool offload = kind == FitKind::Offload;
    // llama.cpp in RAM: its own offload (plan's search: --n-cpu-moe, then -ngl) or, with no GPU,
    // its CPU answer decides, judged on every GPU and the host. Streaming from SSD stays the rule's.
    const bool by_llamacpp_offload = pass == 1 && o.engine == EngineKind::LlamaCpp;
    if (by_llamacpp_offload && b.ram_bytes == 0) continue;  // no --ram: nothing to offload to (as the rule's offload)
    // vLLM / SGLang in RAM: their --cpu-offload-gb as plan solves it (the least whole GiB per GPU
    // with which their answer fits), judged on every GPU and the host; they stream nothing from SSD.
    const bool serving = o.engine == EngineKind::Vllm || o.engine == EngineKind::Sglang;
    const bool by_serving_offload = pass == 1 && serving && !o.command;
    if (serving && pass == 2) continue;
    if (by_serving_offload && (b.ram_bytes == 0 || b.gpus.empty())) continue;
    const uint64_t memory = checked_add(b.vram_bytes(), b.ram_bytes);
    const bool fastest = prefer == CheckPreference::Speed || (prefer == CheckPreference::Balanced && offload);
    std::optional<Plan> best;
    std::optional<EngineAnswer> best_answer;  // set when the engine's per-device figures decided
    std::optional<EngineRequest> best_request;
    std::string best_quant;
    for (const auto& [quant, bytes] : tiers) {
      s.quant = quant;
      // A pasted llama.cpp command without -c: the context llama.cpp's --fit starts this tier with.
      std::vector<std::string> fit_notes;
      const LlamaCppFitted fitted = llamacpp_fit_plan(model, s, b, o, fit_notes);
      const Scenario& st = fitted.scenario;
      const PlanOptions& ot = fitted.options;  // the command's layers as --fit leaves them
      const bool fit_moved_layers = ot.command && ot.command->llamacpp_defaults.layers_fitted;
      std::optional<EngineAnswer> answer;
      std::optional<EngineRequest> request;
      std::optional<Plan> plan;
      if (by_engine) {  // the engine's per-device figures decide
        if (loaded_bytes_floor(model, bytes) > b.vram_bytes()) continue;
        if (fit_moved_layers) continue;  // --fit moved layers to the CPU: not the GPUs alone
        request = plan_engine_request(model, st, b, ot);
        answer = run_engine(*request);
        if (!answer->fits().value_or(false)) continue;
      } else if (by_serving_offload) {
        if (loaded_bytes_floor(model, bytes) > memory) continue;  // the weights alone exceed the GPUs and the RAM
        plan = make_plan(model, st, b, ot);
        if (!plan->serving_offload || !plan->serving_offload->fits) continue;
        request = plan_engine_request(model, st, b, ot);
        request->serving_cpu_offload_cap = plan->serving_offload->cap;
        answer = plan->serving_offload->answer;
      } else if (by_llamacpp_offload) {
        if (loaded_bytes_floor(model, bytes) > memory) continue;  // the weights alone exceed the GPUs and the RAM
        plan = make_plan(model, st, b, ot);
        if (const auto& lo = plan->llamacpp_offload) {
          if (!lo->fits) continue;
          request = plan_engine_request(model, st, b, ot, lo->placement);
          answer = lo->answer;
        } else {  // no GPU: llama.cpp's CPU answer (-ngl 0)
          if (!b.gpus.empty() || !plan->engine.fits().value_or(false)) continue;
          request = plan_engine_request(model, st, b, ot);
          answer = plan->engine;
        }
      } else {
        const Estimate e = estimate(model, st);
        const Footprint f = make_footprint(model, e);
        if (!(offload ? fits_with_offload(f, b, o, st.context, st.sequences) : fits_on_devices(f, b, o, st.context, st.sequences))) continue;
      }
      ++row.tiers_fitting;
      Plan p = plan ? std::move(*plan) : make_plan(model, st, b, ot);
      if (!best || (fastest && p.decode.expected_tok_s > best->decode.expected_tok_s)) {
        best = std::move(p);
        best_answer = std::move(answer);
        best_request = std::move(request);
        best_quant = quant;
      }
      if (!fastest) break;  // largest first: the first that fits is the largest
    }
    if (!best) continue;
    row.fit = kind;
    row.tier = best->estimate.weights.tier;
    row.quant = best_quant;
    row.weights_bytes = best->estimate.weights.bytes;
    row.decode_tok_s = best->decode.expected_tok_s;
    row.decode_low_tok_s = best->decode.low_tok_s;
    row.decode_high_tok_s = best->decode.high_tok_s;
    row.note = best->verdict;
    if (best_answer) {
      row.total_bytes = best_answer->total_bytes;
      row.kv_tokens = best_answer->kv_tokens;
      row.max_concurrency = best_answer->max_concurrency;
      row.max_context = best_answer->kv_tokens ? std::min(*best_answer->kv_tokens, limit) : engine_max_context(*best_request, limit);
      row.engine = std::move(best_answer);
    } else {
      row.total_bytes = best->estimate.total_bytes;
      row.max_context = solve_max_context(best->footprint, b, o, s.sequences, limit, offload);
    }
    fill_split(row, *best);
    return row;
  }
  // No fit: report the smallest tier, so "what would it take" has a figure to start from.
  s.quant = tiers.back().first;
  const Estimate smallest = estimate(model, s);
  row.tier = smallest.weights.tier;
  row.quant = s.quant;
  row.weights_bytes = smallest.weights.bytes;
  row.total_bytes = smallest.total_bytes;
  row.note = what_it_would_take(smallest, box);
  return row;
}

std::vector<CheckRow> check_models(const std::vector<Model>& models, const Box& box, const PlanOptions& o, const Scenario& base,
                                   CheckPreference prefer) {
  std::vector<CheckRow> rows;
  for (const auto& m : models) rows.push_back(check_model(m, box, o, base, prefer));
  std::stable_sort(rows.begin(), rows.end(), [](const CheckRow& a, const CheckRow& b) {
    if (a.fit != b.fit) return static_cast<int>(a.fit) < static_cast<int>(b.fit);
    return a.decode_tok_s > b.decode_tok_s;
  });
  return rows;
}

}  // namespace vc
