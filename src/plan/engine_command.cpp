#include "plan/engine_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string_view>
#include <variant>

#include "core/checked.h"
#include "core/text.h"
#include "core/units.h"
#include "engines/engine_tiers.h"
#include "engines/sglang_profile.h"
#include "engines/sglang_weights.h"
#include "engines/vllm_data_parallel.h"
#include "plan/engine_speed.h"
#include "plan/serving_drafter.h"
#include "model/quant.h"

namespace vc {
namespace {

// Where the CPU's weights come from under llama.cpp's default --mmap. Only where this plan reads
// weights from the SSD (the rule's tiers) or llama.cpp's own host is over its RAM by mapped pages
// (plan/engine_speed.h) does the page cache fall short; a dense model reads every weight each
// token, so no part of it is "read most".
std::string mmap_note(const Plan& p, bool rule_reads_ssd) {
  const std::string mapped = "weights stay memory-mapped (default --mmap): ";
  const DeviceAllocation* host = llamacpp_speed_host(p);
  if (!rule_reads_ssd && !(host && host->paged_out())) return mapped + "what runs on the CPU is read from the page cache in RAM";
  if (p.footprint.moe_layers())
    return mapped + "the page cache in RAM keeps the experts read most, SSD serves the rest (the llamacpp speed counts each its share of the mapped "
                    "bytes, so it may be low)";
  return mapped + "the page cache in RAM keeps what fits, the rest is read from SSD again every token";
}

// Cache dtype as each engine spells it.
std::string llama_cache_type(const std::string& dtype) {
  const std::string d = lower(dtype);
  if (d == "f16" || d == "fp16") return "f16";
  if (d == "bf16") return "bf16";
  if (d == "f32") return "f32";
  return d;  // q8_0, q4_0, ... are llama.cpp's own names
}
std::string vllm_cache_type(const std::string& dtype) {
  const std::string d = lower(dtype);
  if (d.rfind("fp8", 0) == 0 || d.rfind("e4m3", 0) == 0 || d.rfind("e5m2", 0) == 0) return d == "fp8_e5m2" || d == "e5m2" ? "fp8_e5m2" : "fp8";
  return "auto";
}

// The Hugging Face repository the model's card lives in ("google/gemma-3-27b-it"), or "" when the
// catalogue names none.
std::string hub_repo(const Model& m) {
  const std::string hf = "https://huggingface.co/";
  for (const auto& src : m.sources) {
    if (src.rfind(hf, 0) != 0) continue;
    std::string rest = src.substr(hf.size());
    const auto slash = rest.find('/');
    if (slash == std::string::npos) continue;
    const auto end = rest.find('/', slash + 1);
    return end == std::string::npos ? rest : rest.substr(0, end);
  }
  return "";
}

// What the user passes to the engine for the plan's weights: the Hub repository for the native
// checkpoint, a named build's file, or the GGUF file of a llama.cpp tier (never a catalogue id,
// never the native checkpoint for a quantized tier).
struct ModelArg {
  std::string gguf;      // llama.cpp -m
  std::string serve;     // vLLM / SGLang model argument
  std::string note;      // how to get it
};

// "a" or "an" before a tier name read letter by letter (an IQ1_S, an F16, an MXFP4; a Q4_K_M, a UD-Q2_K_XL).
std::string indefinite_article(const std::string& tier) {
  return !tier.empty() && std::string_view("AEFHILMNORSX").find(tier.front()) != std::string_view::npos ? "an" : "a";
}

ModelArg model_arg(const Plan& p) {
  const Model& m = *p.model;
  const std::string repo = hub_repo(m);
  const std::string base = repo.empty() ? m.id : repo.substr(repo.find('/') + 1);
  const std::string repo_or_id = repo.empty() ? m.id : repo;
  const WeightsFigure& w = p.estimate.weights;
  ModelArg a;
  const std::string tier = w.kind == TierKind::Build ? w.tier.substr(6) : w.kind == TierKind::Native ? m.native.format : w.tier;
  a.gguf = base + "-" + tier + ".gguf";
  if (w.kind == TierKind::Build) {
    a.serve = a.gguf;
    a.note = "the build " + tier + ": use its GGUF file" + (repo.empty() ? "" : " (tokenizer from " + repo + ")");
  } else if (w.kind == TierKind::Native) {
    a.serve = repo_or_id;
    a.note = repo.empty() ? "no Hub repository in the catalogue: name your local checkpoint" : "the native checkpoint, " + repo;
    if (m.family != "gguf") a.note += "; llama.cpp needs it converted to GGUF (convert_hf_to_gguf.py) as " + a.gguf;
  } else {
    const QuantFormat* f = QuantTable::builtin().find_tier(w.tier);
    const bool ggml = f && (f->kind == "mix" || f->kind == "ggml");
    a.serve = ggml ? a.gguf : repo_or_id;
    a.note = ggml ? indefinite_article(w.tier) + " " + w.tier + " GGUF of " + repo_or_id + " (llama-quantize, or a published " + w.tier + " build)"
                  : "the " + w.tier + " weights of " + repo_or_id + " (a pre-quantized checkpoint, or the engine's own quantization)";
  }
  return a;
}

// A setting of the engine's answer when the plan is that engine's answer (nullptr otherwise): the
// command plan prints passes the same.
const SettingValue* answered_setting(const Plan& p, EngineKind kind, const std::string& name) {
  if (p.options.engine != kind || p.engine.engine != kind) return nullptr;
  for (const auto& st : p.engine.settings)
    if (st.name == name) return &st.value;
  return nullptr;
}

// A whole-number setting of the answer (vLLM's max_num_seqs, SGLang's max_running_requests).
std::optional<uint64_t> answered_count(const Plan& p, EngineKind kind, const std::string& setting) {
  const SettingValue* v = answered_setting(p, kind, setting);
  if (v && std::holds_alternative<uint64_t>(*v)) return std::get<uint64_t>(*v);
  return std::nullopt;
}

// A pasted command's speculative flags when the engine's answer above counted its drafter
// (plan/serving_drafter.h): the printed command runs the same drafter.
std::string answered_speculative_flags(const Plan& p, EngineKind kind, const std::string& setting) {
  if (!p.options.command || p.options.command->engine != kind || !answered_setting(p, kind, setting)) return "";
  return serving_speculative_flags(*p.options.command);
}

// The fraction of each device the engine's figures above were computed at, when the plan is that
// engine's answer: the command must realise the same budget. nullopt: not that engine's answer, or
// the engine chooses the fraction itself (SGLang's mem_fraction_static by card size).
std::optional<double> answered_fraction(const Plan& p, EngineKind kind, const std::string& setting) {
  const SettingValue* v = answered_setting(p, kind, setting);
  if (v && std::holds_alternative<double>(*v)) return std::get<double>(*v);
  return std::nullopt;
}

// The fraction of each device the engine may take under the rule: the busiest device's need,
// rounded up to a hundredth, never below 0.5 nor above 0.98.
double memory_fraction(const Plan& p) {
  if (!p.split) return 0.9;
  const auto& b = p.split->devices[p.split->busiest];
  double f = std::ceil(static_cast<double>(b.total) * 100.0 / static_cast<double>(b.capacity)) / 100.0;
  return std::clamp(f, 0.5, 0.98);
}

// Why vLLM and SGLang cannot run this plan, or "": the box does not hold it even with offload, or
// weights stream from SSD (their CPU offload holds weights in RAM; nothing reads them from disk).
std::string offload_beyond_ram(const Plan& p) {
  if (!p.offload) return "";
  if (!p.offload->fits) return "this box does not hold the model even with offload";
  for (const auto& t : p.offload->tiers) {
    if (t.tier == "SSD" && t.weights + t.experts > 0) return "their CPU offload holds weights in RAM, and this plan streams weights from SSD";
  }
  return "";
}

EngineCommand llamacpp(const Plan& p) {
  EngineCommand c;
  c.engine = "llamacpp";
  const auto& s = p.estimate.scenario;
  const ModelArg arg = model_arg(p);
  std::string cmd = fmt::format("llama-server -m {} -c {} -np {}", arg.gguf, s.context * s.sequences, s.sequences);
  c.notes.push_back("-m: " + arg.note);
  if (p.options.command && p.options.command->engine == EngineKind::LlamaCpp && p.options.command->llamacpp.kv_unified) cmd += " -kvu";
  const std::string ct = llama_cache_type(s.cache_dtype);
  if (ct != "f16") cmd += fmt::format(" -ctk {} -ctv {}", ct, ct);
  if (!p.box.gpus.empty()) {
    cmd += " -ngl 999";
    if (p.box.gpus.size() > 1) {
      std::string ts;
      for (const auto& g : p.box.gpus) ts += fmt::format("{}{}", ts.empty() ? "" : ",", std::llround(static_cast<double>(g.memory_bytes) / 1e9));
      cmd += " --split-mode " + std::string(p.options.split == SplitMode::Tensor ? "row" : "layer") + " -ts " + ts;
    }
  }
  if (p.llamacpp_offload) {
    // llama.cpp's own offload, judged on its per-device answer (plan.cpp solve_llamacpp_offload).
    const auto& lo = *p.llamacpp_offload;
    if (lo.fitted) {
      // No -ngl or -ts: llama.cpp's --fit makes the placement above at start-up (engines/llamacpp_fit.h).
      if (const auto at = cmd.find(" -ngl 999"); at != std::string::npos) cmd.erase(at);
      c.notes.push_back("no -ngl: llama.cpp's --fit (on by default) places the layers at start-up as in the device table above");
    } else if (lo.n_gpu_layers) {
      if (const auto at = cmd.find(" -ngl 999"); at != std::string::npos) cmd.replace(at, 9, fmt::format(" -ngl {}", *lo.n_gpu_layers));
    }
    if (lo.n_cpu_moe) cmd += fmt::format(" --n-cpu-moe {}", lo.n_cpu_moe);
    if (lo.given) {  // after --n-cpu-moe, as add_n_cpu_moe keeps their order
      for (const auto& [pattern, buffer] : lo.placement.overrides) cmd += fmt::format(" -ot \"{}={}\"", pattern, buffer);
    }
    const std::string why = lo.given ? "as given" : "the fewest that let every GPU hold its share, from llama.cpp's per-device answer above";
    if (lo.n_cpu_moe) {
      c.notes.push_back(fmt::format("--n-cpu-moe {}: the routed experts of the first {} of {} layers stay in system memory ({})", lo.n_cpu_moe, lo.n_cpu_moe, lo.layers, why));
    }
    if (lo.n_gpu_layers && !lo.fitted) {
      c.notes.push_back(fmt::format("-ngl {}: the last {} of {} layers go to the GPUs and the rest run on the CPU ({})", *lo.n_gpu_layers, *lo.n_gpu_layers, lo.layers,
                                    lo.given ? "as given" : "the most the GPUs hold, from llama.cpp's per-device answer above"));
    }
    c.notes.push_back(mmap_note(p, false));
  } else if (p.offload) {
    const auto& o = *p.offload;
    const uint64_t gpu_slots = !o.tiers.empty() && o.tiers[0].tier == "GPU" ? o.tiers[0].experts_per_layer : 0;
    if (p.box.gpus.empty()) {
      cmd += " -ngl 0";
    } else if (o.experts == 0 || p.footprint.moe_layers() == 0) {
      // A dense model has no expert tensors to move: fewer layers on the GPUs instead.
      uint64_t on_gpu = 0;
      if (p.split) {
        const DeviceShare& b = p.split->devices[p.split->busiest];
        const uint64_t per_layer = p.footprint.layers.empty() ? 1 : std::max<uint64_t>(1, b.total / std::max<uint64_t>(1, p.footprint.layers.size()));
        on_gpu = std::min<uint64_t>(p.footprint.layers.size(), p.box.vram_bytes() / per_layer);
      }
      if (const auto at = cmd.find(" -ngl 999"); at != std::string::npos) cmd.replace(at, 9, fmt::format(" -ngl {}", on_gpu));
      c.notes.push_back(fmt::format("-ngl {}: the model does not fit on the GPUs whole, so the last {} layers go to the GPUs and the rest run on the CPU", on_gpu, on_gpu));
    } else if (gpu_slots == 0) {
      cmd += " -ot \"exps=CPU\"";
      c.notes.push_back("-ot exps=CPU keeps every routed expert tensor in system memory; attention, shared experts and the cache stay on the GPUs");
    } else {
      const uint64_t moe = p.footprint.moe_layers();
      const uint64_t on_gpu = o.experts ? moe * gpu_slots / o.experts : 0;
      if (moe > on_gpu) cmd += fmt::format(" --n-cpu-moe {}", moe - on_gpu);
      c.notes.push_back(fmt::format("llama.cpp keeps one tensor per layer for all experts, so the GPU takes whole layers of experts ({} of {} MoE layers) "
                                    "rather than the hottest experts: its hit rate is the uniform share, not the higher share of the most-used experts{}",
                                    on_gpu, moe, p.options.engine == EngineKind::LlamaCpp ? " (the speed above is computed for this placement)"
                                                 : p.options.hot_cache ? " (the rule's speed assumes hottest-first, as --hot-cache on asked; --engine llamacpp computes this placement's)"
                                                                       : " (the rule's speed counts the uniform share too; --engine llamacpp adds llama.cpp's measured costs)"));
    }
    c.notes.push_back(mmap_note(p, std::any_of(o.tiers.begin(), o.tiers.end(), [](const TierUse& t) { return t.tier == "SSD" && t.weights + t.experts > 0; })));
  }
  if (p.box.nodes > 1) c.notes.push_back("llama.cpp spans nodes only through its RPC backend (--rpc host:port per node)");
  c.command = cmd;
  return c;
}

// The --cpu-offload-gb (bytes per GPU; 0: none) the engine figures above were computed with, so the
// command that realises them keeps it: a pasted command's, or the one the plan's offload chose for
// --engine vllm|sglang (plan.cpp solve_serving_offload).
uint64_t answered_offload_cap(const Plan& p, EngineKind engine) {
  if (p.serving_offload && p.serving_offload->fits && p.options.engine == engine) return p.serving_offload->cap;
  if (!p.options.command || p.options.command->engine != engine) return 0;
  return engine == EngineKind::Sglang ? p.options.command->sglang.cpu_offload_cap : p.options.command->vllm.cpu_offload_cap;
}

// A pasted vLLM command's other offload flags (--offload-backend, --cpu-offload-params, the
// prefetch backend's), which the figures above assume too: " --flag value ..." or "".
std::string pasted_vllm_offload_flags(const Plan& p) {
  if (!p.options.command || p.options.command->engine != EngineKind::Vllm) return "";
  const VllmOffloadSettings& o = p.options.command->vllm.offload;
  const VllmOffloadSettings d;
  std::string out;
  const auto words = [](const std::vector<std::string>& v) {
    std::string w;
    for (const auto& s : v) w += " " + s;
    return w;
  };
  if (o.backend != d.backend) out += " --offload-backend " + o.backend;
  if (!o.cpu_offload_params.empty()) out += " --cpu-offload-params" + words(o.cpu_offload_params);
  if (o.group_size != d.group_size) out += fmt::format(" --offload-group-size {}", o.group_size);
  if (o.num_in_group != d.num_in_group) out += fmt::format(" --offload-num-in-group {}", o.num_in_group);
  if (o.prefetch_step != d.prefetch_step) out += fmt::format(" --offload-prefetch-step {}", o.prefetch_step);
  if (!o.offload_params.empty()) out += " --offload-params" + words(o.offload_params);
  return out;
}

EngineCommand vllm(const Plan& p) {
  EngineCommand c;
  c.engine = "vllm";
  const auto& s = p.estimate.scenario;
  const uint64_t count = std::max<uint64_t>(1, p.box.device_count());
  std::string par;
  switch (p.options.split) {
    case SplitMode::Layer:
    case SplitMode::Pipeline: par = count > 1 ? fmt::format("--pipeline-parallel-size {}", count) : ""; break;
    case SplitMode::Tensor: par = fmt::format("--tensor-parallel-size {}", p.box.gpus.size()) + (p.box.nodes > 1 ? fmt::format(" --pipeline-parallel-size {}", p.box.nodes) : ""); break;
    case SplitMode::Expert: par = fmt::format("--data-parallel-size {} --enable-expert-parallel", count); break;
    case SplitMode::TensorExpert: par = fmt::format("--tensor-parallel-size {} --enable-expert-parallel", count); break;
  }
  if (p.replicas > 1) par += fmt::format(" --data-parallel-size {}", p.replicas);  // a pasted command's -dp: the plan is one replica's
  if (!par.empty()) par += " ";
  const ModelArg arg = model_arg(p);
  c.command = fmt::format("vllm serve {} {}--max-model-len {} --max-num-seqs {} --gpu-memory-utilization {:.2f}", arg.serve, par, s.context,
                          answered_count(p, EngineKind::Vllm, "max_num_seqs")
                              .value_or(vllm_max_num_seqs_for(s.sequences, p.options.split == SplitMode::Expert ? count : 1)),
                          answered_fraction(p, EngineKind::Vllm, "gpu_memory_utilization").value_or(memory_fraction(p)));
  if (arg.serve == arg.gguf && !hub_repo(*p.model).empty()) c.command += " --tokenizer " + hub_repo(*p.model);
  c.notes.push_back("model: " + arg.note);
  const std::string kv = vllm_cache_type(s.cache_dtype);
  if (kv != "auto") c.command += " --kv-cache-dtype " + kv;
  const uint64_t off_gpu = p.offload && p.offload->tiers.size() > 1 ? p.offload->tiers[1].experts + p.offload->tiers[1].weights : 0;
  if (const uint64_t cap = answered_offload_cap(p, EngineKind::Vllm)) {
    c.command += fmt::format(" --cpu-offload-gb {:g}", static_cast<double>(cap) / 1073741824.0);  // the value the figures above assume
    c.command += pasted_vllm_offload_flags(p);
    if (p.serving_offload)
      c.notes.push_back("--cpu-offload-gb: the fewest whole GiB per GPU with which vLLM's answer above fits; vLLM reads those weights from pinned RAM "
                        "over the host link every step, with no hot-expert cache");
  } else if (p.offload && off_gpu) {
    // The rule's RAM tier over the GPUs: vLLM's flag counts GiB per GPU (vllm/config/offload.py).
    const uint64_t gpus = std::max<uint64_t>(1, p.box.device_count());
    c.command += fmt::format(" --cpu-offload-gb {}", (off_gpu / gpus + (1ull << 30) - 1) >> 30);
    c.notes.push_back("--cpu-offload-gb: GiB per GPU; vLLM streams those weights from RAM over PCIe every step, with no hot-expert cache");
  } else {
    c.command += pasted_vllm_offload_flags(p);
  }
  c.command += answered_speculative_flags(p, EngineKind::Vllm, "speculative_method");
  // A pasted --limit-mm-per-prompt: the encoder's profile above assumes it (vllm_encoder.h).
  if (p.options.command && p.options.command->engine == EngineKind::Vllm && !p.options.command->vllm.mm_limits.per_prompt.empty())
    c.command += " --limit-mm-per-prompt '" + p.options.command->vllm.mm_limits.json() + "'";
  if (p.box.nodes > 1) c.notes.push_back("across nodes: start a Ray cluster (ray start) on every node first");
  return c;
}

EngineCommand sglang(const Plan& p) {
  EngineCommand c;
  c.engine = "sglang";
  const auto& s = p.estimate.scenario;
  const uint64_t count = std::max<uint64_t>(1, p.box.device_count());
  uint64_t dp = 1;  // DP-attention groups
  std::string par;
  switch (p.options.split) {
    case SplitMode::Layer:
    case SplitMode::Pipeline: par = count > 1 ? fmt::format("--pp-size {}", count) : ""; break;
    case SplitMode::Tensor: par = fmt::format("--tp {}", p.box.gpus.size()) + (p.box.nodes > 1 ? fmt::format(" --pp-size {}", p.box.nodes) : ""); break;
    case SplitMode::Expert:
      dp = sglang_ep_split_runs_dp_attention(*p.model, p.options.split, count) ? count : 1;
      par = dp > 1 ? fmt::format("--tp {} --dp {} --ep {} --enable-dp-attention", count, count, count) : fmt::format("--tp {} --ep {}", count, count);
      if (dp == 1 && count > 1) c.notes.push_back("--ep without --enable-dp-attention: SGLang's class for this model was not read as building its attention on the "
                                     "attention group, so attention stays split over the TP ranks");
      break;
    case SplitMode::TensorExpert: par = fmt::format("--tp {} --ep {}", count, count); break;
  }
  if (p.replicas > 1) par += fmt::format(" --dp-size {}", p.replicas);  // a pasted command's --dp: the plan is one replica's
  if (!par.empty()) par += " ";
  const ModelArg arg = model_arg(p);
  c.command = fmt::format("python -m sglang.launch_server --model-path {} {}--context-length {}", arg.serve, par, s.context);
  // Each DP-attention scheduler takes max_running_requests // dp: the cap the answer above was made
  // for. A pasted command without one was answered at SGLang's own choice, so none is written.
  const bool pasted = p.options.command && p.options.command->engine == EngineKind::Sglang && p.options.engine == EngineKind::Sglang;
  if (const auto answered = answered_count(p, EngineKind::Sglang, "max_running_requests"))
    c.command += fmt::format(" --max-running-requests {}", *answered);
  else if (pasted)
    c.notes.push_back("--max-running-requests: not in the pasted command, so SGLang chooses it from the pool, as the figures above assume");
  else
    c.command += fmt::format(" --max-running-requests {}", sglang_running_requests_for(s.sequences, dp));
  c.notes.push_back("model: " + arg.note);
  if (const auto f = answered_fraction(p, EngineKind::Sglang, "mem_fraction_static")) {
    c.command += fmt::format(" --mem-fraction-static {:.3g}", *f);
  } else if (p.options.engine == EngineKind::Sglang) {
    c.notes.push_back("--mem-fraction-static: not given, as the figures above assume: SGLang chooses it from the card's memory");
  } else {
    c.command += fmt::format(" --mem-fraction-static {:.2f}", memory_fraction(p));
  }
  const std::string kv = vllm_cache_type(s.cache_dtype);
  if (kv != "auto") c.command += " --kv-cache-dtype " + (kv == "fp8" ? std::string("fp8_e4m3") : kv);
  if (const uint64_t cap = answered_offload_cap(p, EngineKind::Sglang)) {
    c.command += fmt::format(" --cpu-offload-gb {}", cap / 1073741824);  // whole GiB, as pasted or chosen
    if (p.serving_offload) c.notes.push_back("--cpu-offload-gb: the fewest whole GiB per GPU with which SGLang's answer above fits");
  }
  c.command += answered_speculative_flags(p, EngineKind::Sglang, "speculative_algorithm");
  if (p.box.nodes > 1) c.command += fmt::format(" --nnodes {} --node-rank 0 --dist-init-addr HEAD:5000", p.box.nodes), c.notes.push_back("run once per node with its --node-rank");
  return c;
}

}  // namespace

std::vector<EngineCommand> engine_commands(const Plan& p) {
  std::vector<EngineCommand> out;
  if (!p.model->weights_available()) return out;  // no command line for weights nobody can download
  const std::string want = p.options.engine == EngineKind::Rule ? "generic" : to_string(p.options.engine);
  auto supported = [&](const char* engine) {
    if (p.box.gpus.empty()) return std::string(engine) == "llamacpp";
    return std::all_of(p.box.gpus.begin(), p.box.gpus.end(), [&](const Device& d) { return std::find(d.engines.begin(), d.engines.end(), engine) != d.engines.end(); });
  };
  // vLLM and SGLang only where they can load the tier and hold it in GPU + RAM; llama.cpp says why not.
  std::string without;
  if (gguf_only_tier(*p.model, p.estimate.scenario.quant)) without = fmt::format("vLLM and SGLang are not listed: {} is a GGUF file, which they do not serve; pick the native checkpoint for them",
                                          p.estimate.scenario.quant);
  else if (const std::string why = offload_beyond_ram(p); !why.empty()) without = "vLLM and SGLang are not listed: " + why;
  if ((want == "generic" || want == "llamacpp") && (want == "llamacpp" || supported("llamacpp"))) {
    out.push_back(llamacpp(p));
    if (!without.empty()) out.back().notes.push_back(without);
  }
  if (!without.empty()) return out;
  if ((want == "generic" || want == "vllm") && (want == "vllm" || supported("vllm"))) out.push_back(vllm(p));
  if ((want == "generic" || want == "sglang") && (want == "sglang" || supported("sglang"))) out.push_back(sglang(p));
  return out;
}

}  // namespace vc
