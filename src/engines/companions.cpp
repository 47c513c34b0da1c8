#include "engines/companions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_impl.h"
#include "engines/llamacpp_placement.h"
#include "estimate/checkpoint_tower.h"
#include "estimate/side_loads.h"
#include "sources/config/config_tower.h"

namespace vc {
namespace {

constexpr const char* kClipSource = "https://github.com/ggml-org/llama.cpp/blob/master/tools/mtmd/clip.cpp (clip_ctx: ggml_backend_init_by_type GPU)";
constexpr const char* kDraftSource = "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/server-context.cpp (load_model: params_dft)";
constexpr const char* kLoraSource = "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-adapter.cpp (each tensor in the buffer of the layer it modifies)";

bool is_host(const DeviceAllocation& d) { return d.name == "host"; }

// The device named `name`, added before the host when the answer has none yet.
DeviceAllocation& device_named(EngineAnswer& a, const std::string& name) {
  for (auto& d : a.devices) if (d.name == name) return d;
  auto host = std::find_if(a.devices.begin(), a.devices.end(), is_host);
  DeviceAllocation fresh;
  fresh.name = name;
  return *a.devices.insert(host, std::move(fresh));
}

// The projector file's encoder compute, and its weights unless `weights` is false (the model's
// own weights already hold the tower).
void add_tower_lines(DeviceAllocation& d, const Companions& c, const std::string& where, bool weights = true) {
  const VisionTower& t = *c.tower;
  if (weights) {
    d.add({AllocKind::Weights, fmt::format("Vision tower weights (mmproj {}, {} layers)", t.projector.empty() ? "clip" : t.projector, t.layers), t.weight_bytes,
           "sum of the mmproj GGUF's tensor bytes (encoder + projector): " + t.file, where, kClipSource});
  }
  d.add({AllocKind::Compute, fmt::format("Vision encoder compute (one image, {} positions)", format_count(t.positions)), t.activation_bytes, t.activation_formula,
         "an estimate of the encoder's peak for one image at its native size, images encoded one at a time; flash attention removes the scores term",
         kClipSource});
}

void add_lora_line(DeviceAllocation& d, const AdapterFile& lora, uint64_t bytes, const std::string& share) {
  d.add({AllocKind::Weights, fmt::format("LoRA adapter ({}, {} tensors){}", lora.format, lora.tensors, share), bytes,
         fmt::format("sum of the adapter's tensor bytes in {} = {} B{}", lora.file, format_count(lora.bytes), share),
         "llama.cpp --lora: each adapter tensor sits beside the layer it modifies, so the adapter splits like the layers", kLoraSource});
}

// llama-server saves an evicted slot's target and draft states together in its one prompt cache,
// within one --cache-ram budget (tools/server/server-context.cpp, server_slot::prompt_save), so the
// target's "Prompt cache" host line becomes min(--cache-ram, target KV + draft KV).
void add_draft_to_prompt_cache(const EngineRun& run, uint64_t target_kv, uint64_t draft_kv, EngineAnswer& a) {
  if (run.llamacpp_cache_ram_mib == 0) return;
  const uint64_t limit = run.llamacpp_cache_ram_mib < 0 ? UINT64_MAX : static_cast<uint64_t>(run.llamacpp_cache_ram_mib) << 20;
  for (auto& d : a.devices) {
    if (!is_host(d)) continue;
    for (auto& l : d.lines) {
      if (l.label.rfind("Prompt cache", 0) != 0) continue;
      const uint64_t both = std::min(limit, checked_add(target_kv, draft_kv));
      d.total_bytes = checked_add(d.total_bytes - l.bytes, both);
      l.bytes = both;
      l.formula = fmt::format("{} (target {} B + draft model {} B of KV state)", l.formula, format_count(target_kv), format_count(draft_kv));
      l.source += "; https://github.com/ggml-org/llama.cpp/blob/master/tools/server/server-context.cpp (server_slot::prompt_save: target and draft states)";
    }
  }
}

// llama-server's draft: a second model and context with the target's parameters except -devd
// (its devices), -otd (its tensor overrides), -ngld, -cd (0: the target's context per sequence),
// one sequence and -ctkd/-ctvd; it reserves
// its own compute and output buffers. The CUDA context is shared, so no second fit margin.
void add_llamacpp_draft(const EngineRequest& r, const EngineRun& run, const Companions& c, EngineAnswer& a) {
  const LlamaCppMemory target = llamacpp_memory(*r.model, run.llamacpp);
  EngineRequest dr;
  dr.model = c.draft.get();
  dr.box = r.box;
  dr.scenario = draft_scenario(r.scenario, c.draft_context ? c.draft_context : target.n_ctx_seq, c.draft_cache_type);
  EngineRun drun = run;
  drun.llamacpp.n_ctx = dr.scenario.context;
  drun.llamacpp.n_seq = 1;
  drun.llamacpp.kv_unified = false;
  drun.llamacpp.type_k = drun.llamacpp.type_v = c.draft_cache_type;
  drun.llamacpp_cache_ram_mib = 0;  // one prompt cache for both models: the target's line grows below
  drun.placement.overrides = c.draft_overrides;  // -ot applies to the target; the draft's are -otd
  drun.placement.n_gpu_layers = c.draft_gpu_layers.value_or(run.placement.n_gpu_layers > 0 ? 1u << 20 : 0);
  if (c.draft_devices == "none") {
    drun.placement.n_gpu_layers = 0;  // -devd none: the draft on the CPU
  } else if (!c.draft_devices.empty()) {
    // -devd CUDA1[,CUDA2...]: the draft's layers over those devices only, evenly (weight 0 elsewhere).
    std::vector<double> split(drun.placement.devices, 0.0);
    std::stringstream names(c.draft_devices);
    for (std::string name; std::getline(names, name, ',');) {
      uint64_t k = 0;
      const bool cuda = name.rfind("CUDA", 0) == 0 && name.size() > 4 &&
                        std::all_of(name.begin() + 4, name.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
      if (cuda && name.size() < 8) k = std::stoull(name.substr(4));
      if (!cuda || name.size() >= 8 || k >= drun.placement.devices)
        throw InputError("-devd", fmt::format("'{}' is not a device here; accepted: CUDA0 to CUDA{} separated by commas, or none", name, drun.placement.devices - 1));
      split[k] = 1.0;
    }
    drun.placement.tensor_split = split;
  }
  const EngineAnswer draft = engines::llamacpp(dr, drun);
  for (const auto& d : draft.devices) {
    for (const auto& l : d.lines) {
      if (l.kind == AllocKind::RuntimeReserve) continue;
      Allocation line = l;
      line.label = "Draft model: " + l.label;
      line.assumption = "llama-server's draft context: " + l.assumption;
      device_named(a, d.name).add(std::move(line));
    }
  }
  add_draft_to_prompt_cache(run, target.context_bytes(), llamacpp_memory(*c.draft, drun.llamacpp).context_bytes(), a);
  a.settings.push_back({"n_ctx_draft", drun.llamacpp.n_ctx});
  a.settings.push_back({"n_gpu_layers_draft", drun.placement.n_gpu_layers});
  a.settings.push_back({"cache_type_draft", c.draft_cache_type});
  if (!c.draft_devices.empty()) a.settings.push_back({"device_draft", c.draft_devices});
  a.notes.push_back(fmt::format("draft model {} loaded as llama-server does: one sequence of {} tokens, cache {}, source: {}", c.draft->name,
                                format_count(drun.llamacpp.n_ctx), c.draft_cache_type, kDraftSource));
}

void place_llamacpp(const EngineRequest& r, const EngineRun& run, const Companions& c, EngineAnswer& a) {
  if (c.tower) {
    const bool gpu = c.mmproj_offload && run.placement.n_gpu_layers > 0 && run.placement.devices > 0;
    add_tower_lines(device_named(a, gpu ? "CUDA0" : "host"), c,
                    gpu ? "llama.cpp loads the projector on the first GPU backend (not -mg, not -ts), encoder compute there too"
                        : "on the CPU: --no-mmproj-offload, or no GPU");
  }
  if (c.draft) add_llamacpp_draft(r, run, c, a);
  if (!c.loras.empty()) {
    const LlamaCppPlacement p = llamacpp_placement(*r.model, resolve_weights(*r.model, r.scenario.quant).bytes, run.placement);
    std::vector<std::pair<std::string, uint64_t>> layers;  // device, repeating layers there, in device order
    for (const auto& d : a.devices) {
      const auto n = static_cast<uint64_t>(std::count_if(p.layer_device.begin(), p.layer_device.end(),
                                                         [&](const std::string& b) { return (b == "CPU" ? "host" : b) == d.name; }));
      if (n) layers.emplace_back(d.name, n);
    }
    const uint64_t total_layers = p.layer_device.size();
    for (const auto& lora : c.loras) {
      if (layers.empty() || total_layers == 0) {
        add_lora_line(device_named(a, "host"), lora, lora.bytes, "");
        continue;
      }
      uint64_t given = 0;
      for (std::size_t i = 0; i < layers.size(); ++i) {
        const bool last = i + 1 == layers.size();
        const uint64_t share = last ? lora.bytes - given : checked_mul(lora.bytes, layers[i].second) / total_layers;
        given = checked_add(given, share);
        add_lora_line(device_named(a, layers[i].first), lora, share,
                      layers.size() == 1 ? "" : fmt::format(" x {}/{} layers here", layers[i].second, total_layers));
      }
    }
  }
}

void place_rule(const EngineRequest& r, const Companions& c, EngineAnswer& a) {
  if (a.devices.empty()) return;
  DeviceAllocation& d = a.devices.front();
  if (c.tower) {
    // A checkpoint whose weights hold its own tower (the estimate's weights.vision line) loads it
    // once: the projector file adds its encoder compute, not a second copy of the tower.
    const bool in_weights = checkpoint_tower_line(*r.model, resolve_weights(*r.model, r.scenario.quant)).has_value();
    add_tower_lines(d, c, "the rule puts what loads beside the model on the first device", !in_weights);
    if (in_weights) a.notes.push_back("the checkpoint's weights already hold its vision tower: the --mmproj file adds its encoder compute, not its weights");
  }
  if (c.draft) {
    const Scenario ds = draft_scenario(r.scenario, c.draft_context, c.draft_cache_type);
    for (const auto& l : draft_lines(*c.draft, ds)) d.add(engines::from_line(l));
  }
  for (const auto& lora : c.loras) add_lora_line(d, lora, lora.bytes, "");
}

}  // namespace

void place_companions(const EngineRequest& r, const EngineRun& run, EngineAnswer& a) {
  const Companions& c = r.companions;
  if (a.engine == EngineKind::LlamaCpp && tower_from_config(*r.model) && !c.tower) {
    a.notes.push_back(fmt::format("the checkpoint's vision tower ({} params) is not loaded: llama.cpp loads a tower only from a projector GGUF "
                                  "(--mmproj); source: {}",
                                  format_params(r.model->params.by_class.at(ParamClass::Vision)), kClipSource));
  }
  if (c.empty()) return;
  switch (a.engine) {
    case EngineKind::LlamaCpp: place_llamacpp(r, run, c, a); break;
    case EngineKind::Rule: place_rule(r, c, a); break;
    case EngineKind::Vllm:
    case EngineKind::Sglang:
      // The drafter is the engine's own (it changes the KV pool); a projector or adapter file is not placed.
      if (c.tower || !c.loras.empty())
        a.notes.push_back(fmt::format("{} answer: the mmproj and LoRA file lines are not placed per device yet (the vision tower of a "
                                      "safetensors checkpoint is in its weights); see components",
                                      to_string(a.engine)));
      return;
  }
  if (c.tower) {
    a.settings.push_back({"image_tokens_per_image", c.tower->image_tokens});
    a.settings.push_back({"images", c.images});
  }
  if (c.image_tokens) {
    a.settings.push_back({"image_tokens", c.image_tokens});
    a.notes.push_back(fmt::format("the context includes {} image tokens ({} image(s) x {}); the KV lines hold them", format_count(c.image_tokens), c.images,
                                  c.images ? c.image_tokens / c.images : 0));
  }
  // Fits again with the added lines: a device that did not fit still does not.
  for (auto& d : a.devices) {
    if (d.capacity && d.fits) d.fits = *d.fits && d.total_bytes <= *d.capacity;
  }
  engines::finish(a);
}

}  // namespace vc
