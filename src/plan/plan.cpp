#include "plan/plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/units.h"
#include "engines/engine_tiers.h"
#include "engines/llamacpp_fit.h"
#include "engines/llamacpp_profile.h"
#include "engines/vllm_profile.h"
#include "plan/engine_speed.h"
#include "plan/serving_command.h"
#include "plan/serving_drafter.h"
#include "plan/unified_memory.h"
#include "speed/speed_data.h"

namespace vc {
namespace {

constexpr uint64_t kGiB = 1ull << 30;  // --cpu-offload-gb counts GiB (vLLM: N x 1024**3)

OffloadOptions offload_options(const PlanOptions& o) {
  OffloadOptions oo;
  oo.skew = o.expert_skew;
  oo.hot_cache = o.hot_cache;
  oo.per_device_fixed = o.per_device_fixed;
  oo.efficiency_bp = o.efficiency_bp;
  // vLLM and SGLang load every weight into GPU or pinned host memory; only mmap'd GGUF streams.
  oo.ssd_streaming = o.engine != EngineKind::Vllm && o.engine != EngineKind::Sglang;
  if (!oo.ssd_streaming) oo.no_ssd_engine = o.engine == EngineKind::Vllm ? "vLLM" : "SGLang";
  return oo;
}

SplitInput split_input(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t context, uint64_t sequences) {
  SplitInput in;
  in.footprint = &f;
  in.box = &box;
  in.mode = o.split;
  in.context = context;
  in.sequences = sequences;
  in.per_device_fixed = o.per_device_fixed;
  return in;
}

const char* kBandwidthSource =
    "efficiency: Databricks, 'LLM Inference Performance Engineering: Best Practices' (2023), model bandwidth utilization (MBU) of batch-1 decode "
    "measured near 60% on A100/H100; set --efficiency to your own measurement";
const char* kComputeSource =
    "2 FLOPs per active parameter per token (Kaplan et al. 2020, 'Scaling Laws for Neural Language Models', §2.1); efficiency 40%, below the 46.2% "
    "model FLOPs utilization PaLM reports (Chowdhery et al. 2022, Table 3)";

// The rule's range: the bound times the share of it measured runs reach (10th-90th percentile,
// data/speed_efficiency.json "rule_ranges"), whatever --efficiency sets the estimate to.
void add_rule_range(Speed& sp, const BoundShareRange& r, const char* runs) {
  if (sp.upper_tok_s <= 0) return;
  sp.low_tok_s = sp.upper_tok_s * r.low;
  sp.high_tok_s = sp.upper_tok_s * r.high;
  sp.assumption += fmt::format("; likely {:.0f}-{:.0f}% of the upper bound, the share {} reach ({}); --engine llamacpp|vllm|sglang models the "
                               "engine's fixed costs and gives a narrower range",
                               r.low * 100, r.high * 100, runs, r.source);
}

Speed device_decode(const SplitResult& s, uint32_t eff_bp) {
  // Stages run one after another for one sequence; the devices of a stage read in parallel.
  std::vector<double> stage_time;
  for (const auto& d : s.devices) {
    if (d.stage >= stage_time.size()) stage_time.resize(d.stage + 1, 0);
    if (d.bandwidth) stage_time[d.stage] = std::max(stage_time[d.stage], static_cast<double>(d.read_per_token) / static_cast<double>(d.bandwidth));
  }
  double seconds = 0;
  for (double t : stage_time) seconds += t;
  Speed sp;
  sp.upper_tok_s = seconds > 0 ? 1.0 / seconds : 0;
  sp.expected_tok_s = sp.upper_tok_s * eff_bp / 10000.0;
  const auto& b = s.devices[s.busiest];
  sp.formula = fmt::format("s/token = sum over {} stage{} of max over its devices (bytes read / bandwidth) = {:.5f} s (busiest reads {} at {} GB/s); "
                           "upper bound {:.1f} tok/s; expected × {} = {:.1f} tok/s",
                           stage_time.size(), stage_time.size() == 1 ? "" : "s", seconds, format_bytes(b.read_per_token),
                           format_grouped(static_cast<double>(b.bandwidth) / 1e9, 0), sp.upper_tok_s, format_percent_bp(eff_bp), sp.expected_tok_s);
  sp.assumption = "decode of one sequence reads its active weights, its cache and its state once per token; communication between devices not counted";
  sp.source = kBandwidthSource;
  add_rule_range(sp, SpeedData::builtin().rule_decode_on_device, "published decode runs on one memory system");
  return sp;
}

Speed prefill_speed(const SplitResult& s, const Model& model, uint32_t eff_bp) {
  // Each stage does its share of the work (by bytes read) at the sum of its devices' compute.
  std::vector<double> stage_flops, stage_read;
  double all_read = 0;
  for (const auto& d : s.devices) {
    if (d.stage >= stage_flops.size()) stage_flops.resize(d.stage + 1, 0), stage_read.resize(d.stage + 1, 0);
    stage_flops[d.stage] += d.bf16_tflops * 1e12;
    stage_read[d.stage] += static_cast<double>(d.read_per_token);
    all_read += static_cast<double>(d.read_per_token);
  }
  const double flops_per_token = 2.0 * static_cast<double>(model.params.active());
  double seconds = 0;
  for (std::size_t i = 0; i < stage_flops.size(); ++i) {
    if (stage_flops[i] > 0 && all_read > 0) seconds += flops_per_token * (stage_read[i] / all_read) / stage_flops[i];
  }
  Speed sp;
  sp.upper_tok_s = seconds > 0 ? 1.0 / seconds : 0;
  sp.expected_tok_s = sp.upper_tok_s * eff_bp / 10000.0;
  sp.formula = fmt::format("tok/s = dense BF16 FLOP/s / (2 × {} active params) per stage = {:.0f} upper bound; × {} = {:.0f}", format_params(model.params.active()),
                           sp.upper_tok_s, format_percent_bp(eff_bp), sp.expected_tok_s);
  sp.assumption = "prefill is compute-bound: long prompts, batched; attention FLOPs over the context not counted";
  sp.source = kComputeSource;
  add_rule_range(sp, SpeedData::builtin().rule_prefill, "published prefill runs on the GPUs");
  return sp;
}

}  // namespace

bool fits_on_devices(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t context, uint64_t sequences) {
  if (box.gpus.empty()) return false;
  return split(split_input(f, box, o, context, sequences)).all_fit;
}

bool fits_with_offload(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t context, uint64_t sequences) {
  return offload_plan(f, box, offload_options(o), context, sequences).fits;
}

uint64_t solve_max_context(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t sequences, uint64_t limit, bool offload) {
  auto ok = [&](uint64_t c) { return offload ? fits_with_offload(f, box, o, c, sequences) : fits_on_devices(f, box, o, c, sequences); };
  limit = std::min(limit, kMaxContextTokens);
  if (limit == 0 || !ok(1)) return 0;
  uint64_t lo = 1, hi = limit;  // ok(lo) holds
  if (ok(hi)) return hi;
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

uint64_t solve_max_sequences(const Footprint& f, const Box& box, const PlanOptions& o, uint64_t context, bool offload) {
  auto ok = [&](uint64_t n) { return offload ? fits_with_offload(f, box, o, context, n) : fits_on_devices(f, box, o, context, n); };
  if (!ok(1)) return 0;
  uint64_t lo = 1, hi = kMaxSequences;
  if (ok(hi)) return hi;
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

EngineRequest plan_engine_request(const Model& model, const Scenario& scenario, const Box& box, const PlanOptions& options,
                                  const std::optional<LlamaCppPlacementSettings>& placement) {
  EngineRequest r;
  r.model = &model;
  r.scenario = scenario;
  r.scenario.engine = options.engine;
  r.box = box;
  r.split = options.split;
  r.per_device_fixed = options.per_device_fixed;
  if (placement) r.llamacpp_placement = placement;
  else if (options.command && options.engine == EngineKind::LlamaCpp) r.llamacpp_placement = options.command->placement;
  if (options.command && options.command->engine == EngineKind::LlamaCpp) r.llamacpp_flags = options.command;
  if (options.command && is_serving_command(*options.command)) {  // a pasted vLLM/SGLang command, at the plan's context
    r.command = options.command;
    set_serving_context(*r.command, scenario.context);
    // vLLM -dp N on an MoE: N DP ranks, the experts over all of them (engines/vllm_data_parallel.h).
    if (experts_over_data_parallel(*r.command, model)) r.command->vllm.data_parallel = r.command->parallel.data_parallel;
    attach_serving_drafter(r);  // its speculative decoding, as `estimate` counts it (plan/serving_drafter.h)
  }
  return r;
}

LlamaCppFitted llamacpp_fit_plan(const Model& model, Scenario scenario, const Box& box, const PlanOptions& options, std::vector<std::string>& notes) {
  LlamaCppFitted out{scenario, options};
  EngineRun* command = out.options.command && options.engine == EngineKind::LlamaCpp ? &*out.options.command : nullptr;
  for (auto& n : settle_llamacpp_fit(model, command, out.scenario, box, [&](uint64_t context, const LlamaCppPlacementSettings& placement) {
         Scenario s = scenario;
         s.context_from_model = false;
         s.context = context;
         return run_engine(plan_engine_request(model, s, box, options, placement));
       }))
    notes.push_back(std::move(n));
  return out;
}

namespace {

// llama.cpp memory-maps its weights by default (no --no-mmap, no --mlock): a host short of RAM by
// no more than the mapped weights the CPU reads still starts, the OS reading again from disk what
// the page cache cannot keep (llama-model-loader.cpp; docs/engines.md, "CPU model buffer").
// Said after the engine's speed is known (apply_engine_speed), which reads them from the SSD.
std::string paged_from_disk(const DeviceAllocation& host, const Box& box, const Speed& decode) {
  const uint64_t over = host.paged_out();
  if (!over) return "";
  return fmt::format(" Memory-mapped (llama.cpp's default), it would still start: the OS reads the {} of weights RAM cannot keep from disk again as "
                     "tokens need them, so decode runs at the disk's speed{}.",
                     format_bytes(over),
                     box.ssd_bandwidth && decode.expected_tok_s > 0 ? fmt::format(": about {} with the SSD at {} GB/s", speed_text_for(decode, 2),
                                                                                  format_grouped(static_cast<double>(box.ssd_bandwidth) / 1e9, 1))
                                                                    : " (give --ssd-gbps for a figure)");
}

// The engine's answer for the request at another context and number of sequences.
EngineAnswer engine_answer_at(const EngineRequest& request, uint64_t context, uint64_t sequences) {
  EngineRequest r = request;
  r.scenario.context = context;
  r.scenario.sequences = sequences;
  if (r.command && is_serving_command(*r.command)) set_serving_context(*r.command, context);
  return run_engine(r);
}

}  // namespace

bool engine_fits(const EngineRequest& request, uint64_t context, uint64_t sequences) {
  return engine_answer_at(request, context, sequences).fits().value_or(false);
}

namespace {

// The largest n in [1, hi] for which ok(n) holds, given ok is monotone; 0 when ok(1) fails.
template <typename Ok>
uint64_t largest(uint64_t hi, Ok ok) {
  if (hi == 0 || !ok(1)) return 0;
  uint64_t lo = 1;
  if (ok(hi)) return hi;
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (ok(mid) ? lo : hi) = mid;
  }
  return lo;
}

// Every GPU of the answer holds its share (the host is RAM: judged on its own).
bool gpus_hold(const EngineAnswer& a) {
  return std::all_of(a.devices.begin(), a.devices.end(), [](const DeviceAllocation& d) { return d.name == "host" || d.fits.value_or(true); });
}

// llama.cpp's offload for a box whose GPUs cannot hold everything: MoE models first move the routed
// experts of the fewest leading layers to the CPU (--n-cpu-moe N, how llama.cpp users offload);
// when even every layer's experts on the CPU is not enough, or for a dense model, the GPUs keep the
// most layers they hold (-ngl N). Each candidate is judged on llama.cpp's own per-device answer.
std::optional<LlamaCppOffload> solve_llamacpp_offload(const EngineRequest& base, const Footprint& f) {
  const uint64_t layers = f.layers.size();
  if (layers == 0) return std::nullopt;
  auto answer = [&](const LlamaCppPlacementSettings& pl) {
    EngineRequest r = base;
    r.llamacpp_placement = pl;
    return run_engine(r);
  };
  auto placement = [&](std::optional<uint64_t> ngl, uint64_t cpu_moe) {
    LlamaCppPlacementSettings pl;
    pl.n_gpu_layers = ngl.value_or(1u << 20);
    pl.cpu_moe_layers = cpu_moe;  // a count, not N -ot regexes: the search runs many placements
    return pl;
  };
  LlamaCppOffload o;
  o.layers = layers;
  const bool moe = f.moe_layers() > 0;
  if (moe && gpus_hold(answer(placement(std::nullopt, layers)))) {
    // The most layers that keep their experts on the GPUs, so the fewest moved to the CPU.
    const uint64_t keep = largest(layers, [&](uint64_t k) { return gpus_hold(answer(placement(std::nullopt, layers - k))); });
    o.n_cpu_moe = layers - keep;
  } else {
    o.n_cpu_moe = moe ? layers : 0;
    o.n_gpu_layers = largest(layers, [&](uint64_t n) { return gpus_hold(answer(placement(n, o.n_cpu_moe))); });
  }
  o.placement = placement(o.n_gpu_layers, o.n_cpu_moe);
  o.answer = answer(o.placement);
  o.fits = o.answer.fits().value_or(false);
  return o;
}

// vLLM's and SGLang's offload for a box whose GPUs cannot hold everything: --cpu-offload-gb, the
// fewest whole GiB per GPU with which every GPU of the engine's answer holds its share (more
// offload only moves more to the host, so the GPUs' verdict is monotone in it). nullopt: even
// every weight of a rank offloaded leaves a GPU short. At that cap the host must hold the pinned
// weights too; if it does not, a larger cap does not help.
std::optional<ServingOffload> solve_serving_offload(const EngineRequest& base, uint64_t weight_bytes) {
  auto answer = [&](uint64_t gib) {
    EngineRequest r = base;
    r.serving_cpu_offload_cap = checked_mul(gib, kGiB);
    return run_engine(r);
  };
  const uint64_t most = weight_bytes / kGiB + 1;  // every weight of one rank, and more
  auto holds = [&](uint64_t gib) { return gpus_hold(answer(gib)); };
  if (!holds(most)) return std::nullopt;
  uint64_t lo = 0, hi = most;  // holds(hi); lo: not known to hold (0: no offload, which did not)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (holds(mid) ? hi : lo) = mid;
  }
  ServingOffload o;
  o.cap = checked_mul(hi, kGiB);
  o.answer = answer(hi);
  o.fits = o.answer.fits().value_or(false);
  return o;
}

}  // namespace

namespace {

// The largest n in [1, hi] for which ok(n) holds (ok monotone; 0 when ok(1) fails), searched
// outward from a guess by doubling steps and then bisected: a few runs when the guess is near.
template <typename Ok>
uint64_t largest_from(uint64_t hi, uint64_t guess, Ok ok) {
  if (hi == 0) return 0;
  guess = std::clamp<uint64_t>(guess, 1, hi);
  uint64_t lo = 0, up = 0;  // ok(lo) holds, ok(up) fails
  if (ok(guess)) {
    lo = guess;
    for (uint64_t step = 1;; step *= 2) {
      if (lo == hi) return hi;
      const uint64_t next = std::min(hi, lo + step);
      if (!ok(next)) {
        up = next;
        break;
      }
      lo = next;
    }
  } else {
    up = guess;
    for (uint64_t step = 1;; step *= 2) {
      if (up == 1) return 0;
      const uint64_t next = up > step ? up - step : 1;
      if (ok(next)) {
        lo = next;
        break;
      }
      up = next;
    }
  }
  while (up - lo > 1) {
    const uint64_t mid = lo + (up - lo) / 2;
    (ok(mid) ? lo : up) = mid;
  }
  return lo;
}

// Where the first device runs out, reading each device's bytes as a straight line through two
// answers at contexts a < b (the cache grows with the context; the rest barely moves).
uint64_t crossing_guess(const EngineAnswer& at_a, uint64_t a, const EngineAnswer& at_b, uint64_t b) {
  uint64_t guess = b;
  for (std::size_t i = 0; i < at_a.devices.size() && i < at_b.devices.size(); ++i) {
    const auto& da = at_a.devices[i];
    const auto& db = at_b.devices[i];
    if (!da.capacity || db.total_bytes <= da.total_bytes || db.total_bytes <= *da.capacity) continue;
    const double room = static_cast<double>(*da.capacity) - static_cast<double>(da.total_bytes);
    const double per_unit = static_cast<double>(db.total_bytes - da.total_bytes) / static_cast<double>(b - a);
    const double at = static_cast<double>(a) + std::max(0.0, room) / per_unit;
    guess = std::min(guess, static_cast<uint64_t>(std::max(1.0, at)));
  }
  return guess;
}

}  // namespace

uint64_t engine_max_context(const EngineRequest& r, uint64_t limit) {
  limit = std::min(limit, kMaxContextTokens);
  const uint64_t seqs = std::max<uint64_t>(1, r.scenario.sequences);
  auto answer_at = [&](uint64_t c) { return engine_answer_at(r, c, seqs); };
  auto fits = [&](uint64_t c) { return engine_fits(r, c, seqs); };
  if (r.scenario.engine != EngineKind::LlamaCpp || r.command || limit == 0) return largest(limit, fits);
  // llama.cpp sizes everything from -c = context x sequences padded to kLlamaCppCellPad cells, so
  // the largest context that fits is the last one before a pad boundary: search the boundaries,
  // starting where a straight line through two answers says the first device runs out.
  const EngineAnswer at_limit = answer_at(limit);
  if (at_limit.fits().value_or(false)) return limit;
  const uint64_t steps = std::max<uint64_t>(1, checked_mul(limit, seqs) / kLlamaCppCellPad);
  auto context_of = [&](uint64_t k) { return std::max<uint64_t>(1, k * kLlamaCppCellPad / seqs); };
  const uint64_t k_a = std::clamp<uint64_t>(checked_mul(r.scenario.context, seqs) / kLlamaCppCellPad, 1, steps);
  uint64_t guess = k_a;
  if (k_a < steps) {
    const uint64_t c_a = context_of(k_a);
    guess = crossing_guess(answer_at(c_a), c_a, at_limit, limit) * seqs / kLlamaCppCellPad;
  }
  const uint64_t k = largest_from(steps, guess, [&](uint64_t i) { return fits(context_of(i)); });
  return k ? context_of(k) : 0;
}

uint64_t engine_max_sequences(const EngineRequest& r) {
  // llama.cpp splits -c over -np, so every sequence keeps the context; vLLM/SGLang pools are sized
  // by the card, so the concurrency is what the pool holds.
  return largest(std::min<uint64_t>(kMaxSequences, 256), [&](uint64_t n) { return engine_fits(r, r.scenario.context, n); });
}

std::string llamacpp_offload_flags(const LlamaCppOffload& o) {
  std::string flags;
  if (o.n_cpu_moe) flags = fmt::format("--n-cpu-moe {}", o.n_cpu_moe);
  if (o.n_gpu_layers) flags += fmt::format("{}-ngl {}", flags.empty() ? "" : " ", *o.n_gpu_layers);
  return flags.empty() ? "-ngl 999" : flags;
}

// A unified box short at the OS's default GPU share: does raising the limit hold it on the GPU?
// Then say how far, and how users raise it (the plan with every share at the device's memory).
namespace {
std::string raised_share_hint(const Model& model, const Scenario& scenario, const Box& box, const PlanOptions& options) {
  const Plan raised = make_plan(model, scenario, with_raised_gpu_shares(box), options);
  if (!raised.fits_on_devices) return "";
  uint64_t need = 0;  // the busiest GPU's bytes with the limit raised
  if (options.engine == EngineKind::Rule) {
    for (const auto& d : raised.split->devices) need = std::max(need, d.total);
  } else {
    for (const auto& d : raised.engine.devices) if (d.name != "host") need = std::max(need, d.total_bytes);
  }
  const uint64_t mib = (need + (uint64_t{1} << 20) - 1) >> 20;
  const GpuShare* share = nullptr;
  for (const auto& g : box.gpus) if (g.share && !share) share = &*g.share;
  return fmt::format(" It fits with the GPU's share raised above the OS default to at least {} ({} MiB): {}; plan it here with --gpu-wired-limit {}MiB.",
                     format_bytes(need, ByteUnits::Binary), format_count(mib), share->raise, mib);
}

// -dp N: N copies of the replica's plan side by side; each holds the whole model (memory per GPU
// is one replica's) and serves its own sequences, so decode tokens per second add up.
void add_replicas(Plan& p) {
  const uint64_t n = p.replicas;
  const double all = static_cast<double>(n) * p.decode.expected_tok_s;
  p.lines.push_back(Line{"plan.data_parallel", "Data-parallel replicas", 0,
                         fmt::format("{} replicas x {} GPUs ({}) = {}; decode in all = {} x {:.2f} tok/s = {:.2f} tok/s", n, p.box.device_count(), p.box.describe(),
                                     p.replicated_box, n, p.decode.expected_tok_s, all),
                         "each replica loads the whole model and its own KV cache (the per-GPU figures above are one replica's) and decodes its own "
                         "sequences; the total assumes one sequence on every replica at once",
                         "https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html; SGLang --dp-size (python/sglang/srt/server_args.py)"});
  Speed in_all = p.decode;  // n replicas side by side: the estimate and its range n times one's
  in_all.expected_tok_s = all;
  in_all.low_tok_s *= static_cast<double>(n);
  in_all.high_tok_s *= static_cast<double>(n);
  p.verdict += fmt::format(" Data parallel: {} replicas of this plan on {}, about {} in all with a sequence on each.", n, p.replicated_box, speed_text_for(in_all, 2));
}

}  // namespace

namespace {
// make_plan on the devices the command's ranks use (one replica's, under -dp N).
Plan make_plan_of(const Model& model, const Scenario& scenario, const Box& box, const PlanOptions& options, uint64_t replicas, const Box& whole_box);
}  // namespace

Plan make_plan(const Model& model, const Scenario& asked, const Box& whole_box, const PlanOptions& options) {
  if (options.efficiency_bp == 0 || options.efficiency_bp > 10000) throw InputError("--efficiency", "must be above 0% and at most 100%");
  if (options.compute_efficiency_bp == 0 || options.compute_efficiency_bp > 10000) throw InputError("--compute-efficiency", "must be above 0% and at most 100%");
  // A pasted llama.cpp command: the context and layers llama.cpp's --fit settles at start-up.
  std::vector<std::string> fit_notes;
  const LlamaCppFitted fitted = llamacpp_fit_plan(model, asked, whole_box, options, fit_notes);
  const Scenario& scenario = fitted.scenario;
  // A pasted vLLM/SGLang command: where its ranks sit. With data-parallel replicas (-dp N on a dense
  // model) every figure below is one replica's, on its own devices.
  PlanOptions replica_options = fitted.options;
  uint64_t replicas = 1;
  std::optional<Box> replica_box;
  if (options.command && is_serving_command(*options.command)) {
    ServingLayout layout = serving_layout(*options.command, whole_box, model, options.split);
    replicas = layout.replicas;
    replica_options.split = layout.split;
    if (replicas > 1) replica_box = std::move(layout.box);
  }
  Plan p = make_plan_of(model, scenario, replica_box ? *replica_box : whole_box, replica_options, replicas, whole_box);
  p.engine.notes.insert(p.engine.notes.begin(), fit_notes.begin(), fit_notes.end());
  return p;
}

namespace {

Plan make_plan_of(const Model& model, const Scenario& scenario, const Box& box, const PlanOptions& options, uint64_t replicas, const Box& whole_box) {
  Plan p;
  p.replicas = replicas;
  if (replicas > 1) p.replicated_box = whole_box.describe();
  p.model = &model;
  p.estimate = estimate(model, scenario);
  p.estimate.scenario.engine = options.engine;
  p.engine = run_engine(plan_engine_request(model, scenario, box, options));
  p.footprint = make_footprint(model, p.estimate);
  p.box = box;
  p.options = options;
  p.aggregate_capacity = box.vram_bytes();
  p.aggregate_fits = !box.gpus.empty() && p.estimate.total_bytes <= p.aggregate_capacity;
  const uint64_t ctx = scenario.context, seqs = scenario.sequences;

  if (!box.gpus.empty()) {
    p.split = split(split_input(p.footprint, box, options, ctx, seqs));
    // Fits come from the engine's per-device figures (the rule's are the split's own).
    p.fits_on_devices = options.engine == EngineKind::Rule ? p.split->all_fit : p.engine.fits().value_or(false);
    p.decode = device_decode(*p.split, options.efficiency_bp);
    p.prefill = prefill_speed(*p.split, model, options.compute_efficiency_bp);
  }
  // llama.cpp short on its GPUs: its own offload (or the user's placement), judged on its answer.
  if (options.engine == EngineKind::LlamaCpp && !box.gpus.empty() && (options.command || !p.fits_on_devices)) {
    if (options.command) {  // the command's placement, or the one llama.cpp's --fit made of it (llamacpp_fit_plan)
      LlamaCppOffload o;
      o.placement = options.command->placement;
      o.layers = p.footprint.layers.size();
      if (o.placement.n_gpu_layers < o.layers) o.n_gpu_layers = o.placement.n_gpu_layers;
      o.n_cpu_moe = o.placement.cpu_moe_layers;  // --n-cpu-moe, given as a flag or in the pasted command
      o.fitted = options.command->llamacpp_defaults.layers_fitted;  // --fit's layers (llamacpp_fit_plan), else the user's
      o.given = !o.fitted;
      o.answer = p.engine;
      o.fits = p.engine.fits().value_or(false);
      p.llamacpp_offload = o;
    } else if (auto o = solve_llamacpp_offload(plan_engine_request(model, scenario, box, options), p.footprint)) {
      p.llamacpp_offload = o;  // p.engine stays the answer with every layer on the GPUs (the one estimate gives)
    }
  }
  // vLLM / SGLang short on their GPUs, with RAM to hold what they offload and no pasted command
  // (whose --cpu-offload-gb is the user's): the least --cpu-offload-gb that makes their answer fit.
  const bool serving = options.engine == EngineKind::Vllm || options.engine == EngineKind::Sglang;
  if (serving && !box.gpus.empty() && !p.fits_on_devices && !options.command && box.ram_bytes > 0 && !gguf_only_tier(model, scenario.quant))
    p.serving_offload = solve_serving_offload(plan_engine_request(model, scenario, box, options), p.estimate.weights.bytes);
  if (p.split && options.engine == EngineKind::Rule) {  // an engine explains its own per-device lines
    const DeviceShare& b = p.split->devices[p.split->busiest];
    Line l;
    l.id = "plan.busiest";
    l.label = fmt::format("Busiest device: {} #{} ({})", b.device, b.rank + 1, b.holds);
    l.bytes = b.total;
    l.formula = fmt::format("{} weights + {} cache + {} state + {} overhead ({} of those + {} per process) = {} of {}", format_bytes(b.weights), format_bytes(b.cache),
                            format_bytes(b.state), format_bytes(b.overhead), format_percent_bp(scenario.overhead_bp), format_bytes(options.per_device_fixed),
                            format_bytes(b.total), format_bytes(b.capacity));
    l.assumption = fmt::format("split {}: {}", to_string(options.split),
                               options.split == SplitMode::Layer || options.split == SplitMode::Pipeline
                                   ? "layers whole, contiguous, balanced by bytes in proportion to device memory; embeddings first, output head last"
                                   : options.split == SplitMode::Tensor ? "heads and weights divided by the TP degree; kv heads replicated below the degree; latent cache whole on every rank"
                                   : options.split == SplitMode::Expert ? "routed experts divided; attention replicated and sequences divided (data-parallel attention)"
                                                                        : "heads divided as TP, routed experts divided as EP over all devices");
    l.source = "docs/plan.md; llama.cpp --split-mode/-ts, vLLM tensor/pipeline/expert parallel, SGLang --tp/--ep/--enable-dp-attention";
    p.lines.push_back(std::move(l));
  }
  if (!p.fits_on_devices) {
    p.offload = offload_plan(p.footprint, box, offload_options(options), ctx, seqs);
    p.decode = Speed{};
    // The rule's prefill is compute on the GPUs holding the weights; with weights in RAM it gives
    // none (an engine's placement does: --engine llamacpp).
    p.prefill = Speed{};
    p.decode.upper_tok_s = p.offload->upper_tok_s;
    p.decode.expected_tok_s = p.offload->expected_tok_s;
    p.decode.formula = p.offload->formula;
    p.decode.assumption = options.hot_cache
                              ? fmt::format("offload: routed reads served by tier per a Zipf(s = {}) popularity over {} experts, hottest experts in the fastest tier "
                                            "(--hot-cache on: an engine that keeps a hot-expert cache); one sequence, full context",
                                            p.offload->skew, p.offload->experts)
                              : fmt::format("offload: each tier serves the share of the {} experts per layer it holds (no hot-expert cache, as llama.cpp, vLLM "
                                            "and SGLang; --hot-cache on for an engine that keeps one); one sequence, full context",
                                            p.offload->experts);
    p.decode.source = kBandwidthSource;
    add_rule_range(p.decode, SpeedData::builtin().rule_decode_offload,
                   options.hot_cache ? "published runs with weights in RAM, by engines without a hot-expert cache," : "published runs with weights in RAM");
    const auto& o = *p.offload;
    std::string hits;
    for (const auto& t : o.tiers) {
      hits += fmt::format("{}{} {} of {} experts per layer → {:.1f}%", hits.empty() ? "" : "; ", t.tier, t.experts_per_layer, o.experts, t.hit_rate * 100);
    }
    p.lines.push_back(Line{"plan.offload.hit_rate", "Routed expert reads served by each tier", 0,
                           fmt::format("hit(tier) = H(h_before + h, s) / H(n, s) - H(h_before, s) / H(n, s), H(h, s) = Σ i^-s for i ≤ h, s = {}: {}", o.skew, hits),
                           o.hot_cache ? "expert popularity within a layer is Zipf with skew s; the hottest experts sit in the fastest tier; a token's k picks are independent draws"
                                       : "no hot-expert cache (the default): experts land in tiers in no particular order, so a tier serves the share of experts it holds (s = 0)",
                           "docs/plan.md (hot-expert model); --hot-cache on with --expert-skew s for an engine that keeps hot experts"});
  }
  p.lines.push_back(Line{"plan.decode", "Decode speed", 0, p.decode.formula, p.decode.assumption, p.decode.source});
  if (p.split) p.lines.push_back(Line{"plan.prefill", "Prefill speed", 0, p.prefill.formula, p.prefill.assumption, p.prefill.source});
  p.lines.push_back(Line{"plan.footprint", "Weights by layer", p.footprint.weights_total, p.footprint.rule,
                         "one effective bits-per-parameter across classes (a checkpoint that keeps attention at 16 bits puts more bytes there than this)",
                         model.params.total_source()});

  // Verdict in words.
  const DeviceAllocation* engine_host = nullptr;
  for (const auto& d : p.engine.devices) {
    if (d.name == "host" && d.capacity) engine_host = &d;
  }
  if (box.gpus.empty() && options.engine == EngineKind::LlamaCpp && engine_host) {
    // llama.cpp on the CPU: its own answer for the host decides (what check reads too).
    const uint64_t ram = *engine_host->capacity, held = engine_host->total_bytes;
    p.verdict = held <= ram ? fmt::format("No GPU: llama.cpp holds {} of {} RAM, {} to spare; about {}.", format_bytes(held), format_bytes(ram),
                                          format_bytes(ram - held), speed_text_for(p.decode, 2))
                            : fmt::format("No GPU, and llama.cpp needs {} of {} RAM, {} over (its lines above say where: a smaller context, -cram for "
                                          "the prompt cache or a smaller tier helps).",
                                          format_bytes(held), format_bytes(ram), format_bytes(held - ram));
  } else if (box.gpus.empty()) {
    p.verdict = p.offload->fits ? fmt::format("No GPU: runs from RAM{} at about {}.", box.ssd_bandwidth ? " and SSD" : "", speed_text_for(p.decode, 2))
                                : "No GPU, and it does not fit in RAM" + std::string(box.ssd_bandwidth ? " and SSD" : "") + ": " + p.offload->why + ".";
  } else {
    const DeviceShare& b = p.split->devices[p.split->busiest];
    const std::string agg = fmt::format("{} total against {} on {} device{}", format_bytes(p.estimate.total_bytes), format_bytes(p.aggregate_capacity),
                                        box.device_count(), box.device_count() == 1 ? "" : "s");
    const DeviceAllocation* tight = p.engine.tightest();
    if (options.engine != EngineKind::Rule && tight) {
      // A plan that does not fit names the device that is over, the host included (tightest()
      // weighs GPUs only: a host over its RAM would otherwise read as a GPU with room).
      if (!p.fits_on_devices && *tight->capacity >= tight->total_bytes) {
        for (const auto& d : p.engine.devices) {
          if (d.capacity && d.total_bytes > *d.capacity) tight = &d;
        }
      }
      const int64_t room = static_cast<int64_t>(*tight->capacity) - static_cast<int64_t>(tight->total_bytes);
      const std::string pool = p.engine.kv_tokens ? fmt::format("; KV pool {} tokens, {:.2f} requests of {} at once", format_count(*p.engine.kv_tokens),
                                                                p.engine.max_concurrency.value_or(0), format_tokens(ctx))
                                                  : "";
      p.verdict = p.fits_on_devices
                      ? fmt::format("Fits with {}: {} allocated on the tightest device ({}) of {}, {} to spare{}.", to_string(options.engine),
                                    format_bytes(tight->total_bytes), tight->name, format_bytes(*tight->capacity), format_bytes(static_cast<uint64_t>(std::max<int64_t>(room, 0))), pool)
                      : fmt::format("Does not fit with {}: {} on {} needs {} of {}{}{}.", to_string(options.engine), p.model->name, tight->name,
                                    format_bytes(tight->total_bytes), format_bytes(*tight->capacity),
                                    room < 0 ? fmt::format(", {} over", format_bytes(static_cast<uint64_t>(-room))) : "", pool);
    } else if (p.fits_on_devices) {
      p.verdict = fmt::format("Fits: {}; every device fits, the busiest ({} #{}) with {} to spare.", agg, b.device, b.rank + 1, format_bytes(static_cast<uint64_t>(b.headroom())));
    } else if (p.aggregate_fits) {
      p.verdict = fmt::format("Fits in aggregate ({}) but not per device: the busiest ({} #{}, {}) needs {}, {} over its {}.", agg, b.device, b.rank + 1, b.holds,
                              format_bytes(b.total), format_bytes(static_cast<uint64_t>(-b.headroom())), format_bytes(b.capacity));
    } else {
      p.verdict = fmt::format("Short: {}, {} short in aggregate.", agg, format_bytes(p.estimate.total_bytes - p.aggregate_capacity));
    }
    if (p.llamacpp_offload && !p.fits_on_devices) {
      const auto& lo = *p.llamacpp_offload;
      const std::string how = lo.given ? "the placement given" : lo.fitted ? "the layers --fit places" : llamacpp_offload_flags(lo);
      const DeviceAllocation* host = nullptr;
      for (const auto& d : lo.answer.devices) {
        if (d.name == "host") host = &d;
      }
      if (lo.fits) {
        p.verdict += fmt::format(" With llama.cpp's offload ({}): every GPU holds its share and the host holds {} in RAM{}, about {}.", how,
                                 format_bytes(host ? host->total_bytes : 0), host && host->capacity ? "" : " (give --ram to check it)", speed_text_for(p.decode, 2));
      } else {
        p.verdict += host && host->capacity && host->total_bytes > *host->capacity
                         ? fmt::format(" Offload does not rescue it: with {} the host needs {} of {} RAM.", how, format_bytes(host->total_bytes), format_bytes(*host->capacity))
                         : fmt::format(" Offload does not rescue it: even with {} a GPU is over its memory.", how);
      }
    } else if (p.serving_offload && !p.fits_on_devices) {
      const auto& so = *p.serving_offload;
      const std::string flag = fmt::format("--cpu-offload-gb {}", so.cap / kGiB);
      const DeviceAllocation* host = nullptr;
      for (const auto& d : so.answer.devices) {
        if (d.name == "host") host = &d;
      }
      p.verdict += so.fits ? fmt::format(" With {}'s CPU offload ({}, the fewest whole GiB per GPU that fits): every GPU holds its share and the host "
                                         "holds {} in pinned RAM, read over the host link every step.",
                                         to_string(options.engine), flag, format_bytes(host ? host->total_bytes : 0))
                           : fmt::format(" Offload does not rescue it: with {} the host needs {} of {} RAM (pinned, so it cannot page).", flag,
                                         format_bytes(host ? host->total_bytes : 0), format_bytes(host && host->capacity ? *host->capacity : 0));
    } else if (!p.fits_on_devices && p.offload) {
      const auto& o = *p.offload;
      const bool all_on_gpu = o.fits && p.footprint.moe_layers() > 0 && o.tiers.front().tier == "GPU" &&
                              std::all_of(o.tiers.begin() + 1, o.tiers.end(), [](const TierUse& t) { return t.cache + t.weights + t.experts == 0; });
      if (all_on_gpu) {
        p.verdict += fmt::format(" Placing tensors one by one instead of whole layers (llama.cpp -ot) holds it on the GPUs: about {}.", speed_text_for(p.decode, 2));
      } else {
        p.verdict += o.fits ? fmt::format(" With offload to RAM{}: about {}.", box.ssd_bandwidth ? " and SSD" : "", speed_text_for(p.decode, 2))
                            : " Offload does not rescue it: " + o.why + ".";
      }
    }
  }
  if (!p.fits_on_devices && has_default_gpu_share(box)) p.verdict += raised_share_hint(model, scenario, box, options);
  apply_engine_speed(p, model);
  if (const DeviceAllocation* host = llamacpp_speed_host(p)) p.verdict += paged_from_disk(*host, box, p.decode);
  if (replicas > 1) add_replicas(p);
  if (!model.weights_available()) {  // an estimate of what it would take, never a "fits" for files that do not exist
    p.verdict = fmt::format("No fit verdict and no command line: {} is {} ({}). On paper, if it ships as estimated: {}", model.name,
                            status_text(model.status), model.status_note, p.verdict);
    p.aggregate_fits = p.fits_on_devices = false;
  }
  return p;
}

}  // namespace

}  // namespace vc
