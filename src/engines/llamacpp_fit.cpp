#include "engines/llamacpp_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

namespace vc {

namespace {

constexpr int64_t kMargin = static_cast<int64_t>(kLlamaCppFitMargin);
// kLlamaCppCudaContextBytes (552,402,944 B) in words, for the notes.
constexpr const char* kFreeMemoryText = "an NVIDIA GPU's less the 527 MiB its CUDA context holds";
static_assert(kLlamaCppCudaContextBytes >> 20 == 526 && (kLlamaCppCudaContextBytes + (1u << 19)) >> 20 == 527, "kFreeMemoryText rounds the constant");
__extension__ typedef __int128 i128;  // fit.cpp's products of a token count and a byte count, exact

// One GPU's share in the layer steps: n_layer layers of which the last n_part are partial (their
// `overflow` part elsewhere: the first of them by `overflow`, the rest their experts).
struct DeviceLayers {
  uint64_t n_layer = 0;
  uint64_t n_part = 0;
  LlamaCppLayerFraction overflow = LlamaCppLayerFraction::Moe;
  uint64_t n_full() const { return n_layer - n_part; }
};

int64_t as_signed(uint64_t v) {
  if (v > static_cast<uint64_t>(INT64_MAX)) throw OverflowError("--fit: a byte count above 2^63");
  return static_cast<int64_t>(v);
}

// fit.cpp set_ngl_tensor_split_tbo: -ngl the sum, -ts the counts, and one override per partial
// layer (the device's first partial layer by its overflow type and buffer, the others' experts
// to the CPU). Layers count from the first offloaded one; the output layer is the last.
LlamaCppPlacementSettings layers_placement(const LlamaCppPlacementSettings& base, uint64_t layers, const std::vector<DeviceLayers>& per,
                                           const std::vector<std::size_t>& overflow_buffer) {
  LlamaCppPlacementSettings s = base;
  s.n_gpu_layers = 0;
  for (const auto& d : per) s.n_gpu_layers += d.n_layer;
  s.tensor_split.clear();
  if (per.size() > 1 && s.n_gpu_layers > 0) {
    for (const auto& d : per) s.tensor_split.push_back(static_cast<double>(d.n_layer));
  }
  s.overrides.clear();
  s.cpu_moe_layers = 0;
  s.fit_overflow.clear();
  uint64_t il0 = layers + 1 - s.n_gpu_layers;
  for (std::size_t id = 0; id < per.size(); ++id) {
    il0 += per[id].n_full();
    for (uint64_t il = il0; il < il0 + per[id].n_part; ++il) {
      const bool first = il == il0;
      s.fit_overflow.push_back({il, first ? per[id].overflow : LlamaCppLayerFraction::Moe, first ? overflow_buffer[id] : 0});
    }
    il0 += per[id].n_part;
  }
  return s;
}

// fit.cpp's false-position step: delta x (target - used) / (used_high - used), kept in 1 .. delta-1.
// The quotient is cast as fit.cpp casts it (to 32 bits), so a negative one wraps to a large step.
uint64_t false_position_step(uint64_t delta, int64_t target, int64_t used, int64_t used_high) {
  const int64_t headroom = used_high - used;
  uint64_t step = delta - 1;
  if (headroom > 0) {
    const auto q = static_cast<i128>(delta) * (static_cast<i128>(target) - used) / headroom;
    step = static_cast<uint32_t>(static_cast<int64_t>(q));
  }
  return std::min<uint64_t>(std::max<uint64_t>(step, 1), delta - 1);
}

const char* fraction_text(LlamaCppLayerFraction f) {
  switch (f) {
    case LlamaCppLayerFraction::Attention: return "only its attention";
    case LlamaCppLayerFraction::Up: return "only its attention and ffn_up";
    case LlamaCppLayerFraction::Gate: return "all but its ffn_down tensors";
    case LlamaCppLayerFraction::Moe: return "all but its routed experts";
  }
  return "";
}

std::string layers_text(const std::vector<DeviceLayers>& per, const std::vector<std::size_t>& overflow_buffer, uint64_t layers) {
  std::string out;
  uint64_t on_gpus = 0;
  for (std::size_t id = 0; id < per.size(); ++id) {
    const DeviceLayers& d = per[id];
    on_gpus += d.n_layer;
    out += fmt::format("{}CUDA{} {} layer{}", id ? "; " : "", id, d.n_layer, d.n_layer == 1 ? "" : "s");
    if (d.n_part) {
      out += fmt::format(" ({} with routed experts on the CPU", d.n_part);
      if (d.overflow != LlamaCppLayerFraction::Moe) {
        out += fmt::format(", but the first of them keeps {} here, the rest of it on {}", fraction_text(d.overflow),
                           overflow_buffer[id] ? fmt::format("CUDA{}", overflow_buffer[id] - 1) : std::string("the CPU"));
      }
      out += ")";
    }
  }
  const uint64_t all = layers + 1;
  out += fmt::format("; {} of {} layers (the output layer counted) on the CPU", all - std::min(all, on_gpus), all);
  return out;
}

}  // namespace

LlamaCppFitOutcome llamacpp_fit(const LlamaCppFitStart& in, const LlamaCppFitMeasure& measure) {
  LlamaCppFitOutcome out;
  out.placement = in.placement;
  const uint64_t streams = in.kv_unified ? 1 : std::max<uint64_t>(1, in.sequences);
  const bool ctx_auto = !in.n_ctx;
  const uint64_t ctx_max = checked_mul(in.trained, streams);
  const uint64_t ctx_min = checked_mul(kLlamaCppFitMinContext, streams);
  // Step 0: -c unset is n_ctx_train per stream, before anything is measured.
  out.n_ctx = ctx_auto ? ctx_max : *in.n_ctx;
  if (ctx_auto) {
    out.notes.push_back(fmt::format("no -c: llama.cpp's --fit sizes the context the model was trained with{}, {} tokens", 
                                    streams > 1 ? fmt::format(" for each of the -np {} KV streams", streams) : "", format_count(out.n_ctx)));
  }
  const std::size_t nd = in.gpu_free.size();
  if (nd == 0 && in.host_total == 0) return out;  // no memory named to fit against

  // Step 1: does every device keep its margin?
  const LlamaCppFitUse full = measure(out.n_ctx, out.placement);
  int64_t sum_free = 0, sum_used = 0, sum_model = 0;
  bool changes = false;
  if (nd == 0) {
    sum_used = full.host_used;
    sum_free = as_signed(in.host_total);
    changes = sum_free - sum_used < kMargin;
  } else {
    for (std::size_t id = 0; id < nd; ++id) {
      sum_free += as_signed(in.gpu_free[id]);
      sum_used += full.gpu_used[id];
      sum_model += full.gpu_model[id];
      changes = changes || as_signed(in.gpu_free[id]) - full.gpu_used[id] < kMargin;
    }
  }
  if (!changes) {
    if (!ctx_auto) return out;  // nothing was left to llama.cpp's choice that it changes: no note
    out.notes.push_back(nd == 0 ? "--fit (on by default) changes nothing: the RAM keeps 1 GiB free"
                                : "--fit (on by default) changes nothing: every GPU keeps 1 GiB free (-fitt)");
    return out;
  }
  const int64_t margins = kMargin * static_cast<int64_t>(std::max<std::size_t>(nd, 1));

  // Step 2: a context llama.cpp chose may shrink, by linear interpolation on the summed memory.
  bool context_done = false;
  if (sum_free - sum_used - margins < 0) {
    if (!ctx_auto) {
      out.notes.push_back("-c set: --fit leaves the context");
    } else if (ctx_max <= ctx_min) {
      out.notes.push_back(fmt::format("--fit leaves the context: the trained one is not above -fitc ({} tokens a stream)", format_count(kLlamaCppFitMinContext)));
    } else {
      int64_t target = sum_free - margins;
      if (nd > 1) {
        // Whole layers (dense) or whole tensors (MoE, about a third of a layer) per device: half of one wasted on average.
        const uint64_t offloaded = std::min<uint64_t>(in.placement.n_gpu_layers, in.layers);
        const int64_t per_layer = offloaded ? sum_model / static_cast<int64_t>(offloaded) : 0;
        target -= static_cast<int64_t>(nd + 1) * per_layer / (in.moe ? 6 : 2);
      }
      out.n_ctx = ctx_min;
      const LlamaCppFitUse least = measure(ctx_min, out.placement);
      const int64_t used_min = nd == 0 ? least.host_used : std::accumulate(least.gpu_used.begin(), least.gpu_used.end(), int64_t{0});
      if (target > used_min && sum_used > used_min) {
        const auto step = static_cast<i128>(ctx_max - ctx_min) * (target - used_min) / (sum_used - used_min);
        uint64_t n = ctx_min + static_cast<uint64_t>(step);
        const uint64_t align = 256 * streams;  // "round down context for CUDA backend, keep it divisible by the number of streams"
        out.n_ctx = std::max(n - n % align, ctx_min);
        out.notes.push_back(fmt::format("--fit lowers the context to {} tokens: interpolated between -fitc ({} a stream) and the trained context on the "
                                        "projected memory{} against the free memory ({}), rounded down to 256 a stream (common/fit.cpp); pass -c to choose it",
                                        format_count(out.n_ctx), format_count(kLlamaCppFitMinContext), nd > 1 ? " summed over the GPUs" : "", kFreeMemoryText));
        context_done = nd <= 1;
      } else {
        out.notes.push_back(fmt::format("--fit lowers the context to its floor, {} tokens (-fitc {} a stream), which is not enough", format_count(ctx_min),
                                        format_count(kLlamaCppFitMinContext)));
      }
    }
  }
  if (context_done) return out;
  if (nd == 0) {
    out.notes.push_back("--fit cannot fit the model in system memory by lowering the context (it stops there)");
    return out;
  }
  // fit.cpp gives up on the layers where the user placed them.
  const char* placed = in.ngl_given ? "-ngl" : nd > 1 && in.split_given ? "-ts" : in.overrides_given ? "-ot / --n-cpu-moe" : nullptr;
  if (placed) {
    out.notes.push_back(fmt::format("{} set: --fit moves no layers", placed));
    return out;
  }

  // Step 3: fill the GPUs back to front (MoE: the routed experts of every partial layer on the CPU).
  std::vector<int64_t> targets;
  for (std::size_t id = 0; id < nd; ++id) targets.push_back(as_signed(in.gpu_free[id]) - kMargin);
  int64_t surplus_cpu_moe = 0;
  if (in.moe) {
    LlamaCppPlacementSettings all_experts_out = in.placement;
    all_experts_out.cpu_moe_layers = in.layers;
    const LlamaCppFitUse u = measure(out.n_ctx, all_experts_out);
    for (std::size_t id = 0; id < nd; ++id) surplus_cpu_moe += as_signed(in.gpu_free[id]) - u.gpu_used[id] - kMargin;
  }
  std::vector<std::size_t> overflow_buffer(nd, 0);  // 0: the CPU
  auto used_with = [&](const std::vector<DeviceLayers>& per, const std::vector<std::size_t>& bufs) {
    return measure(out.n_ctx, layers_placement(in.placement, in.layers, per, bufs)).gpu_used;
  };
  std::vector<DeviceLayers> per(nd);
  std::vector<int64_t> mem = used_with(per, overflow_buffer);
  for (std::size_t k = nd; k-- > 0;) {
    uint64_t unassigned = in.layers + 1;
    for (std::size_t j = k + 1; j < nd; ++j) unassigned -= per[j].n_layer;
    std::vector<DeviceLayers> high = per;
    high[k].n_layer = unassigned;
    if (in.moe) high[k].n_part = k < nd - 1 ? high[k].n_layer : high[k].n_layer - 1;  // the output layer is whole
    if (high[k].n_layer == 0) continue;
    std::vector<int64_t> mem_high = used_with(high, overflow_buffer);
    if (mem_high[k] <= targets[k]) {
      per = high, mem = mem_high;
      continue;
    }
    uint64_t delta = high[k].n_layer - per[k].n_layer;
    while (delta > 1) {
      const uint64_t step = false_position_step(delta, targets[k], mem[k], mem_high[k]);
      std::vector<DeviceLayers> test = per;
      test[k].n_layer += step;
      if (in.moe) test[k].n_part += k == nd - 1 && test[k].n_part == 0 ? step - 1 : step;
      const std::vector<int64_t> mem_test = used_with(test, overflow_buffer);
      if (mem_test[k] <= targets[k]) per = test, mem = mem_test;
      else high = test, mem_high = mem_test;
      delta = high[k].n_layer - per[k].n_layer;
    }
  }
  auto finish = [&](const char* how) {
    out.placement = layers_placement(in.placement, in.layers, per, overflow_buffer);
    out.layers_moved = true;
    out.notes.push_back(fmt::format("--fit {}: {} (common/fit.cpp; each GPU up to its free memory, {}, less 1 GiB)", how, layers_text(per, overflow_buffer, in.layers),
                                    kFreeMemoryText));
    return out;
  };
  if (!in.moe || surplus_cpu_moe <= 0) return finish(in.moe ? "keeps the routed experts on the CPU and fills the GPUs back to front" : "fills the GPUs with whole layers back to front");

  // Step 4: the dense parts fit, so the partial layers become whole, front to back.
  std::size_t dense_start = nd;
  for (std::size_t k = nd; k-- > 0;) {
    if (per[k].n_layer == 0) break;
    dense_start = k;
  }
  for (std::size_t id = 0; id <= dense_start && dense_start < nd; ++id) {
    std::vector<DeviceLayers> high = per;
    for (std::size_t j = dense_start; j < nd; ++j) {
      const uint64_t move = j < nd - 1 ? high[j].n_layer : high[j].n_layer - 1;
      high[id].n_layer += move;
      high[j].n_layer -= move;
      high[j].n_part = 0;
    }
    std::size_t dense_start_high = nd - 1;
    std::vector<int64_t> mem_high = used_with(high, overflow_buffer);
    if (mem_high[id] > targets[id]) {
      uint64_t delta = high[id].n_full() - per[id].n_full();
      while (delta > 1) {
        const uint64_t step = false_position_step(delta, targets[id], mem[id], mem_high[id]);
        std::vector<DeviceLayers> test = per;
        std::size_t dense_start_test = dense_start;
        uint64_t converted = 0;
        for (; dense_start_test < nd; ++dense_start_test) {
          const uint64_t n = std::min(step - converted, test[dense_start_test].n_part);
          test[dense_start_test].n_layer -= n;
          test[dense_start_test].n_part -= n;
          test[id].n_layer += n;
          converted += n;
          if (test[dense_start_test].n_part > 0) break;
        }
        const std::vector<int64_t> mem_test = used_with(test, overflow_buffer);
        if (mem_test[id] <= targets[id]) per = test, mem = mem_test, dense_start = dense_start_test;
        else high = test, mem_high = mem_test, dense_start_high = dense_start_test;
        delta = high[id].n_full() - per[id].n_full();
      }
    } else {
      per = high, mem = mem_high, dense_start = dense_start_high;
    }
    // One more layer in part: attention and up, then gate too; else attention alone. A device
    // before the last overflows to the next GPU, the last to the CPU.
    if (dense_start < nd && per[dense_start].n_layer > (id < nd - 1 ? 0u : 1u)) {
      std::vector<DeviceLayers> test = per;
      std::size_t dense_start_test = dense_start;
      test[dense_start_test].n_layer--;
      test[dense_start_test].n_part--;
      test[id].n_layer++;
      test[id].n_part++;
      if (test[dense_start_test].n_part == 0) ++dense_start_test;
      std::vector<std::size_t> bufs_test = overflow_buffer;
      if (id < nd - 1) bufs_test[id] = id + 2;  // CUDA(id+1)
      auto holds = [&](const std::vector<int64_t>& m) { return m[id] < targets[id] && (id + 1 == nd || m[id + 1] < targets[id + 1]); };
      test[id].overflow = LlamaCppLayerFraction::Up;
      std::vector<int64_t> mem_test = used_with(test, bufs_test);
      if (holds(mem_test)) {
        per = test, overflow_buffer = bufs_test, mem = mem_test, dense_start = dense_start_test;
        test[id].overflow = LlamaCppLayerFraction::Gate;
        mem_test = used_with(test, bufs_test);
        if (holds(mem_test)) per = test, overflow_buffer = bufs_test, mem = mem_test, dense_start = dense_start_test;
      } else {
        test[id].overflow = LlamaCppLayerFraction::Attention;
        mem_test = used_with(test, bufs_test);
        if (holds(mem_test)) per = test, overflow_buffer = bufs_test, mem = mem_test, dense_start = dense_start_test;
      }
    }
  }
  return finish("fills the GPUs with whole layers front to back and keeps the rest's routed experts on the CPU");
}

LlamaCppFitUse llamacpp_fit_use(const EngineAnswer& a, std::size_t gpus) {
  LlamaCppFitUse u;
  u.gpu_used.assign(gpus, 0);
  u.gpu_model.assign(gpus, 0);
  for (const DeviceAllocation& d : a.devices) {
    uint64_t used = 0;
    for (const Allocation& l : d.lines) {
      // llama.cpp's breakdown: model, context, compute; not the reserve (the margin) nor the prompt cache (filled later).
      if (l.kind != AllocKind::RuntimeReserve && l.kind != AllocKind::Other) used = checked_add(used, l.bytes);
    }
    if (d.name == "host") {
      u.host_used = as_signed(checked_add(used, d.mapped_not_held));  // llama.cpp's breakdown counts the mapped span
    } else if (d.name.rfind("CUDA", 0) == 0) {
      const std::size_t i = static_cast<std::size_t>(std::stoull(d.name.substr(4)));
      if (i < gpus) u.gpu_used[i] = as_signed(used), u.gpu_model[i] = as_signed(d.bytes(AllocKind::Weights));
    }
  }
  return u;
}

LlamaCppFitStart llamacpp_fit_start(const Model& model, const EngineRun& command, const Scenario& scenario, const std::optional<Box>& box) {
  LlamaCppFitStart s;
  s.layers = model.layers.size();
  s.moe = std::any_of(model.layers.begin(), model.layers.end(), [](const LayerConfig& l) { return l.feed_forward.experts > 0; });
  s.trained = std::min(model.max_context, kMaxContextTokens);
  s.sequences = command.llamacpp.n_seq;
  s.kv_unified = command.llamacpp.kv_unified;
  if (!scenario.context_from_model) s.n_ctx = checked_mul(scenario.context, s.sequences);
  if (s.trained == 0 && !s.n_ctx) s.n_ctx = checked_mul(scenario.context, s.sequences);  // no trained context known: the scenario's
  s.placement = command.placement;
  s.ngl_given = !command.llamacpp_defaults.ngl;
  s.split_given = !command.placement.tensor_split.empty();
  s.overrides_given = !command.placement.overrides.empty() || command.placement.cpu_moe_layers > 0;
  if (box) {
    for (const auto& g : box->gpus) {
      const bool cuda = g.vendor == "nvidia" && g.kind == "gpu";
      s.gpu_free.push_back(cuda ? checked_sub(g.memory_bytes, std::min(g.memory_bytes, kLlamaCppCudaContextBytes)) : g.memory_bytes);
    }
    s.host_total = box->ram_bytes;
  }
  s.placement.devices = std::max<uint64_t>(1, s.gpu_free.size());
  return s;
}

std::vector<std::string> settle_llamacpp_fit(const Model& model, EngineRun* command, Scenario& scenario, const std::optional<Box>& box,
                                             const LlamaCppFitProbe& probe) {
  const bool from_model = scenario.context_from_model;
  resolve_context_from_model(scenario, model);
  scenario.context_from_model = false;
  if (!command || command->engine != EngineKind::LlamaCpp || command->llamacpp_defaults.fit_replayed) return {};
  command->llamacpp_defaults.fit_replayed = true;
  if (!command->llamacpp_defaults.fit) {
    if (!from_model) return {};
    return {fmt::format("no -c: llama.cpp sizes the context the model was trained with, {} tokens in all (-fit off: kept even where the GPUs cannot hold it)",
                        format_count(checked_mul(scenario.context, scenario.sequences)))};
  }
  Scenario start_scenario = scenario;
  start_scenario.context_from_model = from_model;
  const LlamaCppFitStart start = llamacpp_fit_start(model, *command, start_scenario, box);
  const uint64_t seqs = std::max<uint64_t>(1, command->llamacpp.n_seq);
  LlamaCppFitAsked asked{from_model, scenario.context, command->placement, {}};
  const LlamaCppFitOutcome f = llamacpp_fit(start, [&](uint64_t n_ctx, const LlamaCppPlacementSettings& placement) {
    return llamacpp_fit_use(probe(std::max<uint64_t>(1, n_ctx / seqs), placement), start.gpu_free.size());
  });
  scenario.context = std::max<uint64_t>(1, f.n_ctx / seqs);
  command->placement = f.placement;
  command->llamacpp_defaults.layers_fitted = f.layers_moved;
  asked.notes = f.notes;
  command->fit_asked = std::move(asked);
  return f.notes;
}

std::vector<std::string> apply_llamacpp_fit(const Model& model, EngineRequest& r) {
  const EngineRequest asked = r;  // probes start from the request as it was asked
  return settle_llamacpp_fit(model, r.command ? &*r.command : nullptr, r.scenario, r.box, [&](uint64_t context, const LlamaCppPlacementSettings& placement) {
    EngineRequest probe = asked;
    probe.scenario.context = context;
    probe.scenario.context_from_model = false;
    probe.command->placement = placement;
    return run_engine(probe);
  });
}

void refit_llamacpp(const Model& model, EngineRequest& r) {
  if (!r.command || !r.command->fit_asked) return;
  EngineRun& command = *r.command;
  const LlamaCppFitAsked asked = *command.fit_asked;
  for (const auto& n : asked.notes) {
    auto it = std::find(command.notes.begin(), command.notes.end(), n);
    if (it != command.notes.end()) command.notes.erase(it);
  }
  r.scenario.context = asked.context;
  r.scenario.context_from_model = asked.context_from_model;
  command.placement = asked.placement;
  command.fit_asked.reset();
  command.llamacpp_defaults.fit_replayed = command.llamacpp_defaults.layers_fitted = false;
  for (auto& n : apply_llamacpp_fit(model, r)) command.notes.push_back(std::move(n));
}

}  // namespace vc
