#include "engines/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/checked.h"
#include "core/error.h"
#include "core/text.h"
#include "core/units.h"
#include "engines/engine_impl.h"
#include "engines/llamacpp_fit.h"
#include "engines/sglang_profile.h"
#include "engines/sglang_weights.h"
#include "engines/vllm_data_parallel.h"
#include "engines/vllm_profile.h"
#include "model/quant.h"
#include "sources/remote/hub_builds.h"

namespace vc {

const char* to_string(EngineKind kind) {
  switch (kind) {
    case EngineKind::Rule: return "rule";
    case EngineKind::LlamaCpp: return "llamacpp";
    case EngineKind::Vllm: return "vllm";
    case EngineKind::Sglang: return "sglang";
  }
  return "rule";
}

EngineKind parse_engine(const std::string& text, const std::string& subject) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "rule" || s == "generic") return EngineKind::Rule;
  if (s == "llamacpp" || s == "llama.cpp" || s == "llama-cpp") return EngineKind::LlamaCpp;
  if (s == "vllm") return EngineKind::Vllm;
  if (s == "sglang") return EngineKind::Sglang;
  throw InputError(subject, "'" + text + "' is not an engine; accepted: " + kEngineNames);
}

const char* to_string(AllocKind kind) {
  switch (kind) {
    case AllocKind::Weights: return "weights";
    case AllocKind::Kv: return "kv";
    case AllocKind::State: return "state";
    case AllocKind::Compute: return "compute";
    case AllocKind::Activation: return "activation";
    case AllocKind::Output: return "output";
    case AllocKind::RuntimeReserve: return "runtime_reserve";
    case AllocKind::CudaGraphs: return "cuda_graphs";
    case AllocKind::Other: return "other";
  }
  return "other";
}

uint64_t DeviceAllocation::bytes(AllocKind kind) const {
  uint64_t n = 0;
  for (const auto& l : lines) if (l.kind == kind) n = checked_add(n, l.bytes);
  return n;
}

void DeviceAllocation::add(Allocation a) {
  total_bytes = checked_add(total_bytes, a.bytes);
  lines.push_back(std::move(a));
}

uint64_t EngineAnswer::bytes(AllocKind kind) const {
  uint64_t n = 0;
  for (const auto& d : devices) n = checked_add(n, d.bytes(kind));
  return n;
}

std::optional<bool> EngineAnswer::fits() const {
  std::optional<bool> all;
  for (const auto& d : devices) {
    if (!d.fits) continue;
    all = all.value_or(true) && *d.fits;
  }
  return all;
}

const DeviceAllocation* EngineAnswer::tightest() const {
  const DeviceAllocation* best = nullptr;
  int64_t room = 0;
  for (const auto& d : devices) {
    if (!d.capacity || d.name == "host") continue;
    const int64_t r = static_cast<int64_t>(*d.capacity) - static_cast<int64_t>(d.total_bytes);
    if (!best || r < room) best = &d, room = r;
  }
  return best;
}

namespace engines {

AllocKind kind_of_line(const std::string& id) {
  if (id == "weights" || id == "weights.vision") return AllocKind::Weights;
  if (id.rfind("cache.", 0) == 0) return AllocKind::Kv;
  if (id.rfind("state.", 0) == 0) return AllocKind::State;
  if (id == "overhead") return AllocKind::RuntimeReserve;
  return AllocKind::Other;
}

Allocation from_line(const Line& l) { return {kind_of_line(l.id), l.label, l.bytes, l.formula, l.assumption, l.source}; }

std::string rank_name(uint64_t rank, uint64_t tp) { return fmt::format("rank {} (tp{} pp{})", rank, rank % tp, rank / tp); }

Allocation even_weights_line(uint64_t weight_bytes, uint64_t tp, uint64_t pp, const std::string& source) {
  return {AllocKind::Weights, "Weights on this rank", ceil_div(weight_bytes, checked_mul(tp, pp)),
          fmt::format("{} / (tp {} x pp {})", format_count(weight_bytes), tp, pp), "weights split evenly over the ranks", source};
}

Allocation scenario_kv_line(uint64_t bytes, std::string formula, const std::string& pool_rule, const std::string& source) {
  return {AllocKind::Kv, "KV cache the scenario needs", bytes, std::move(formula), "no card given: " + pool_rule + "; give --gpu for its pool", source};
}

std::string no_card_note(const std::string& engine_name) {
  return "no GPU given: the KV line is what the scenario needs; with --gpu the answer gives " + engine_name + "'s pool in tokens and its concurrency";
}

void finish(EngineAnswer& a) {
  a.total_bytes = 0;
  for (auto& d : a.devices) {
    if (d.capacity && !d.fits) d.fits = d.total_bytes <= *d.capacity;
    a.total_bytes = checked_add(a.total_bytes, d.total_bytes);
  }
}

}  // namespace engines

namespace {

// The tensor- and pipeline-parallel degrees a split implies on the box (1 x 1 without one).
std::pair<uint64_t, uint64_t> parallel_degrees(const EngineRequest& r) {
  if (!r.box || r.box->gpus.empty()) return {1, 1};
  const uint64_t count = r.box->device_count();
  switch (r.split) {
    case SplitMode::Layer:
    case SplitMode::Pipeline: return {1, count};
    case SplitMode::Tensor: return {r.box->gpus.size(), r.box->nodes};
    case SplitMode::Expert:
    case SplitMode::TensorExpert: return {count, 1};
  }
  return {1, 1};
}

// llama.cpp without -ts uses every visible GPU, its layers split in proportion to each device's
// memory (llama_model_load_from_file: tensor_split all zero, so each device's free memory).
void split_over_the_box(const Box& box, LlamaCppPlacementSettings& placement) {
  if (box.gpus.empty()) return;
  placement.devices = box.gpus.size();
  placement.tensor_split.clear();
  if (box.gpus.size() > 1) {
    for (const auto& g : box.gpus) placement.tensor_split.push_back(static_cast<double>(g.memory_bytes) / 1e9);  // -ts by memory, in GB
  }
}

}  // namespace

EngineRun engine_run_for(const EngineRequest& r) {
  const Scenario& s = r.scenario;
  EngineRun run;
  if (r.llamacpp_flags && s.engine == EngineKind::LlamaCpp) {
    run = *r.llamacpp_flags;  // a different -ctv stays; a V type that was K's follows the scenario's
    if (run.llamacpp.type_v == run.llamacpp.type_k) run.llamacpp.type_v = s.cache_dtype;
  } else {
    run.llamacpp.type_v = s.cache_dtype;
  }
  run.engine = s.engine;
  // llama.cpp: the whole context over -np sequences, the cache type on K and V, everything offloaded
  // to the GPUs (split by memory, as llama.cpp's -ts does from free memory), or none without GPUs.
  run.llamacpp.n_ctx = checked_mul(s.context, s.sequences);
  run.llamacpp.n_seq = s.sequences;
  run.llamacpp.type_k = s.cache_dtype;
  const bool no_gpu = r.box && r.box->gpus.empty();
  run.placement.n_gpu_layers = no_gpu ? 0 : 1u << 20;
  if (r.box) split_over_the_box(*r.box, run.placement);
  // vLLM: max_model_len is the context; the cache dtype as vLLM spells it; TP x PP from the split.
  const auto [tp, pp] = parallel_degrees(r);
  run.vllm.kv.max_model_len = s.context;
  run.vllm.kv.tensor_parallel = tp;
  run.vllm.kv.pipeline_parallel = pp;
  // vLLM and SGLang store f16/bf16 (the model dtype) or fp8 only: anything else is refused there.
  const bool serving = s.engine == EngineKind::Vllm || s.engine == EngineKind::Sglang;
  run.vllm.kv.kv_cache_dtype = serving ? vllm_cache_dtype_from_scenario(s.cache_dtype) : (lower(s.cache_dtype).rfind("fp8", 0) == 0 ? "fp8" : "auto");
  if (r.box && !r.box->gpus.empty()) run.vllm.card_bytes = r.box->gpus.front().memory_bytes;
  if (r.card_bytes) run.vllm.card_bytes = r.card_bytes;
  run.vllm.lora = r.lora_slots;
  // plan's ep split on vLLM: --data-parallel-size N --enable-expert-parallel, one GPU a DP rank
  // (engines/vllm_data_parallel.h).
  if (s.engine == EngineKind::Vllm && r.split == SplitMode::Expert && tp > 1) {
    run.vllm.data_parallel = tp;
    run.vllm.kv.tensor_parallel = 1;
    run.parallel.data_parallel = tp;
    run.parallel.expert_parallel = true;
  }
  // plan's tp+ep split: the command it prints adds --enable-expert-parallel (vLLM) or --ep N (SGLang);
  // the memory answers read the split itself, the decode speed these flags (plan/engine_speed.cpp).
  if (r.split == SplitMode::TensorExpert && tp > 1) {
    run.parallel.expert_parallel = true;
    run.parallel.expert_parallel_size = tp;
  }
  // plan's ep split on SGLang: DP attention over every rank where the class allows it (sglang_weights.h).
  if (s.engine == EngineKind::Sglang && r.model && sglang_ep_split_runs_dp_attention(*r.model, r.split, tp)) {
    run.parallel.data_parallel = tp;
    run.parallel.dp_attention = true;
    run.parallel.expert_parallel = true;
    run.parallel.expert_parallel_size = tp;
  }
  // The scenario's sequences are the concurrency cap the command plan writes passes (vLLM
  // --max-num-seqs, SGLang --max-running-requests), so the profile is that command's: vLLM's dummy
  // sampler runs over max_num_seqs rows and its CUDA graphs go up to it; SGLang's request map holds
  // max_running_requests rows of the context.
  run.vllm.max_num_seqs = vllm_max_num_seqs_for(s.sequences, run.vllm.data_parallel);
  run.sglang.max_running_requests = sglang_running_requests_for(s.sequences, run.parallel.dp_attention ? run.parallel.data_parallel : 1);
  return run;
}

std::string command_model_tier(const std::string& model) {
  std::string tag;
  if (model.rfind("hf:", 0) == 0) {  // -hf ORG/REPO[:TAG] (common/arg.cpp: "default to Q4_K_M")
    const auto colon = model.find(':', 3);
    if (colon == std::string::npos) return "Q4_K_M";
    tag = model.substr(colon + 1);
    for (char& c : tag) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  } else {
    tag = gguf_quant_tag(model);  // the quantizer's tag closing the file name, as the Hub ladder reads it
  }
  return QuantTable::builtin().find_tier(tag) ? tag : "";  // UD-Q4_K_XL and other builds' own tags: no tier
}

void apply_command_to_scenario(const EngineRun& run, Scenario& sc, const ScenarioGiven& given) {
  sc.engine = run.engine;
  if (run.engine == EngineKind::LlamaCpp) {
    if (!given.context && run.llamacpp_defaults.ctx) sc.context_from_model = true;
    else if (!given.context) sc.context = std::max<uint64_t>(1, run.llamacpp.n_ctx / run.llamacpp.n_seq);
    if (!given.sequences) sc.sequences = run.llamacpp.n_seq;
    if (!given.cache_dtype) sc.cache_dtype = run.llamacpp.type_k;
    if (!given.quant && sc.quant.empty()) sc.quant = command_model_tier(run.model);
  }
  // vLLM / SGLang: the command's --max-model-len / --context-length, else the model's own maximum,
  // a request's whole context (vLLM's ModelConfig derives max_model_len from the config, SGLang its
  // context_len), settled per model by resolve_context_from_model.
  if ((run.engine == EngineKind::Vllm || run.engine == EngineKind::Sglang) && !given.context) {
    if (run.serving_context_given) sc.context = run.engine == EngineKind::Vllm ? run.vllm.kv.max_model_len : run.sglang.context_length;
    else sc.context_from_model = true;
  }
  // vLLM / SGLang: the cache bytes an fp8 --kv-cache-dtype stores (vLLM's and SGLang's "fp8" is e4m3).
  if (run.engine == EngineKind::Vllm || run.engine == EngineKind::Sglang) {
    const std::string& kv = run.engine == EngineKind::Sglang ? run.sglang.kv_cache_dtype : run.vllm.kv.kv_cache_dtype;  // the engines' own lower-case names
    if (!given.cache_dtype && kv.rfind("fp8", 0) == 0) sc.cache_dtype = kv == "fp8_e5m2" ? "FP8_E5M2" : "FP8_E4M3";
  }
}

void resolve_context_from_model(Scenario& sc, const Model& model) {
  if (!sc.context_from_model) return;  // the mark stays: --fit may still lower the context (engines/llamacpp_fit.h)
  const uint64_t trained = std::min(model.max_context, kMaxContextTokens);  // a GGUF's context_length is bounded like -c
  // llama.cpp shares -c over its -np sequences; vLLM and SGLang give every request the whole context.
  const uint64_t share = sc.engine == EngineKind::LlamaCpp ? std::max<uint64_t>(1, sc.sequences) : 1;
  if (trained) sc.context = std::max<uint64_t>(1, trained / share);
}

std::string command_model(const EngineInputs& in) { return in.command.empty() ? "" : parse_engine_command(in.command).model; }

EngineRequest engine_request(const Model& model, Scenario scenario, const EngineInputs& in, const ScenarioGiven& given) {
  EngineRequest r;
  r.model = &model;
  scenario.engine = parse_engine(in.engine, "--engine");
  if (!in.command.empty()) {
    EngineRun run = parse_engine_command(in.command);
    ScenarioGiven g = given;
    g.quant = g.quant || !model.tensors.empty();  // a model read from a GGUF is the file's own tensors
    apply_command_to_scenario(run, scenario, g);
    r.command = std::move(run);
  }
  if (!in.gpu.empty()) {
    Box box;
    box.gpus = parse_gpus(in.gpu, "--gpu");
    apply_gpu_shares(box, in.gpu_wired_limit, "--gpu-wired-limit");  // a unified device holds its OS share; the rest is the host's
    r.box = std::move(box);
  }
  if (!r.box && in.gpu_wired_limit != "default" && !in.gpu_wired_limit.empty()) throw InputError("--gpu-wired-limit", "sets the GPU's share of a unified memory; name the device with --gpu");
  if (!in.gpu_memory.empty()) {
    const uint64_t card = parse_bytes(in.gpu_memory, "--gpu-memory");
    if (r.command) r.command->vllm.card_bytes = r.command->sglang.card_bytes = card;
    r.card_bytes = card;
  }
  // --max-loras / --max-lora-rank turn vLLM's LoRA slots on (as --enable-lora does) and override
  // a pasted command's.
  if (!in.max_loras.empty() || !in.max_lora_rank.empty()) {
    r.lora_slots.max_loras = in.max_loras.empty() ? 1 : parse_max_loras(in.max_loras, "--max-loras");
    if (!in.max_lora_rank.empty()) r.lora_slots.max_lora_rank = parse_max_lora_rank(in.max_lora_rank, "--max-lora-rank");
    if (r.command) {  // the pasted command's --lora-modules adapters stay, for the rank check
      r.command->vllm.lora.max_loras = r.lora_slots.max_loras;
      r.command->vllm.lora.max_lora_rank = r.lora_slots.max_lora_rank;
    }
  }
  r.scenario = std::move(scenario);
  // A pasted llama.cpp command: the context and layers llama.cpp's --fit settles at start-up.
  for (auto& note : apply_llamacpp_fit(model, r)) r.command->notes.push_back(std::move(note));
  return r;
}

EngineAnswer run_engine(const EngineRequest& r) {
  if (!r.model) throw std::logic_error("run_engine: no model");
  EngineRun run = r.command ? *r.command : engine_run_for(r);
  // A pasted llama.cpp command without -c: its context is the scenario's (the model's, or what --fit left).
  if (r.command && r.command->engine == EngineKind::LlamaCpp && r.command->llamacpp_defaults.ctx)
    run.llamacpp.n_ctx = checked_mul(r.scenario.context, run.llamacpp.n_seq);
  // A pasted vLLM / SGLang command without --max-model-len / --context-length: the scenario's context
  // (--context, else the model's maximum, as the engine would take it).
  if (r.command && (r.command->engine == EngineKind::Vllm || r.command->engine == EngineKind::Sglang) && !r.command->serving_context_given)
    set_serving_context(run, r.scenario.context);
  if (!r.command && r.llamacpp_placement) {
    run.placement.n_gpu_layers = r.llamacpp_placement->n_gpu_layers;
    run.placement.overrides = r.llamacpp_placement->overrides;
    run.placement.cpu_moe_layers = r.llamacpp_placement->cpu_moe_layers;
    run.placement.fit_overflow = r.llamacpp_placement->fit_overflow;
    if (!r.llamacpp_placement->tensor_split.empty()) run.placement.tensor_split = r.llamacpp_placement->tensor_split;
  }
  if (r.command && r.box && !r.box->gpus.empty() && run.vllm.card_bytes == 0) run.vllm.card_bytes = r.box->gpus.front().memory_bytes;
  if (!r.command && r.serving_cpu_offload_cap) run.vllm.cpu_offload_cap = run.sglang.cpu_offload_cap = r.serving_cpu_offload_cap;
  const EngineKind kind = r.command ? r.command->engine : r.scenario.engine;
  // A pasted llama.cpp command without -ts runs on every GPU of the box, as llama.cpp does.
  if (r.command && kind == EngineKind::LlamaCpp && r.box && run.placement.tensor_split.empty()) split_over_the_box(*r.box, run.placement);
  // A box without GPUs: llama.cpp has no device to offload to, whatever -ngl says.
  if (kind == EngineKind::LlamaCpp && r.box && r.box->gpus.empty()) run.placement.n_gpu_layers = 0;
  EngineAnswer a;
  switch (kind) {
    case EngineKind::Rule: a = engines::rule(r); break;
    case EngineKind::LlamaCpp: a = engines::llamacpp(r, run); break;
    case EngineKind::Vllm: a = engines::vllm(r, run); break;
    case EngineKind::Sglang: a = engines::sglang(r, run); break;
  }
  place_companions(r, run, a);
  if (r.box) {  // a unified device's capacity is the OS's GPU share, not its whole memory: say so
    for (auto& n : gpu_share_notes(*r.box)) a.notes.push_back(std::move(n));
  }
  return a;
}

}  // namespace vc
