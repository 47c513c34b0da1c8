#include "engines/validate.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "catalogue/catalogue.h"
#include "catalogue/embedded_data.h"
#include "core/error.h"
#include "engines/llamacpp_cpu_weights.h"
#include "engines/llamacpp_cuda_buffers.h"
#include "engines/llamacpp_measured.h"
#include "engines/llamacpp_placement.h"
#include "engines/llamacpp_profile.h"
#include "engines/serving_dtype.h"
#include "engines/sglang_profile.h"
#include "engines/vllm_budget.h"
#include "engines/vllm_encoder.h"
#include "engines/vllm_profile.h"
#include "sources/config/config_mapper.h"
#include "sources/resolver.h"

namespace vc {
namespace {

constexpr double kGiB = 1073741824.0;

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) throw InputError(p.string(), "cannot open; validate expects DIR/llamacpp/runs.json and DIR/engine-logs/cases.json");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return nlohmann::json::parse(ss.str());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(p.string(), std::string("not valid JSON: ") + e.what());
  }
}

ValidationRow row(std::string id, std::string figure, double printed, double ours, double target, std::string note = "") {
  ValidationRow r{std::move(id), std::move(figure), printed, ours, 0, target, false, std::move(note), "", true};
  r.error_percent = printed != 0 ? (ours - printed) / printed * 100.0 : (ours == 0 ? 0 : 100.0);
  r.met = std::fabs(r.error_percent) <= target;
  return r;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void llamacpp_rows(const std::filesystem::path& dir, std::vector<ValidationRow>& out) {
  auto runs = read_json(dir / "llamacpp" / "runs.json");
  for (const auto& r : runs) {
    const std::string id = r.value("id", "?");
    const bool refused = r.contains("errors") && r["errors"].is_array() && !r["errors"].empty();
    if (!refused && (!r.contains("measured_bytes") || !r["measured_bytes"].contains("buffers"))) continue;
    const auto& st = r["settings"];
    LlamaCppSettings s;
    s.n_ctx = st.value("ctx", 4096);
    s.n_seq = st.value("np", 1);
    s.n_ubatch = st.value("ubatch", 512);
    s.n_batch = st.value("batch", 2048);
    s.flash_attn = st.value("fa", "auto") != "off";  // auto enables it on the CPU backend (printed "flash_attn = auto", same buffers as on)
    s.type_k = upper(st.value("ctk", "f16"));
    s.type_v = upper(st.value("ctv", "f16"));
    s.swa_full = st.value("swa_full", false);
    const std::filesystem::path file = dir / "llamacpp" / "gguf" / r.value("model_file", "");
    try {
      Model m = resolve_model(file.string());
      if (refused) {  // llama.cpp refused to create the context: we must refuse too
        try {
          llamacpp_memory(m, s);
          out.push_back(row(id, "refusal (llama.cpp created no context)", 1, 0, 0, "llama.cpp refused these settings; we computed a size"));
        } catch (const InputError&) {
          out.push_back(row(id, "refusal (llama.cpp created no context)", 1, 1, 0));
        }
        continue;
      }
      LlamaCppMemory mem = llamacpp_memory(m, s);
      const auto& bufs = r["measured_bytes"]["buffers"];
      double printed = 0;
      for (const auto& [name, b] : bufs.items()) printed += b.value("context", 0.0);
      out.push_back(row(id, "context_bytes (KV + recurrent)", printed, static_cast<double>(mem.context_bytes()), 0.5));
      double model_bytes = 0;
      for (const auto& [name, b] : bufs.items()) if (name.find("Mapped") != std::string::npos) model_bytes += b.value("model", 0.0);
      double compute = 0;
      for (const auto& [name, b] : bufs.items()) compute += b.value("compute", 0.0);
      out.push_back(row(id, "compute_bytes (scheduler buffer)", compute, static_cast<double>(mem.compute_bytes), 10.0));
      if (model_bytes > 0) out.push_back(row(id, "weights_bytes (mapped model buffer)", model_bytes, static_cast<double>(m.native.bytes), 0.1));
    } catch (const InputError& e) {
      out.push_back(row(id, "context_bytes (KV + recurrent)", 1, 0, 0.5, std::string("not computed: ") + e.what()));
    }
  }
}

// Whether vLLM's profile of the model's vision encoder is modelled (vllm_encoder.h).
bool encoder_profiled(const Model& m) { return vllm_encoder_profile(m, 8192, 1024, 8192, 1, 2).items > 0; }

// The whole budget from the card: non-KV total (the per-device total target, 3%), the KV memory
// and the concurrency line, for cases that print them.
void budget_rows(const nlohmann::json& c, const Model& m, const VllmSettings& kv, std::vector<ValidationRow>& out) {
  const auto& p = c["printed"];
  const auto& st = c["settings"];
  if (!p.contains("non_kv_total_gib") || !p.contains("total_gpu_memory_gib") || !st.contains("gpu_memory_utilization")) return;
  if (st.contains("quantization") && !st["quantization"].is_null()) return;  // weights at another tier: not the catalogue's native bytes
  const std::string id = c.value("id", "?");
  VllmBudgetSettings b;
  b.card_bytes = static_cast<uint64_t>(p["total_gpu_memory_gib"].get<double>() * kGiB);
  b.gpu_memory_utilization = st["gpu_memory_utilization"].get<double>();
  b.weight_bytes = loaded_weight_bytes(m, m.native.bytes, kv.dtype);  // --dtype float32 loads 16-bit weights at 4 bytes
  b.max_num_batched_tokens = st.value("max_num_batched_tokens", 8192);
  b.kv = kv;
  VllmBudget r = vllm_budget(m, b);
  std::string note;
  if (st.value("pipeline_parallel_size", 1) > 1) note = "pipeline parallel: rank 0's figures; vLLM gives every stage the smallest stage's blocks (vllm_pipeline.h)";
  else if ((m.inputs.size() > 1 || id.find("gemma3") != std::string::npos) && !encoder_profiled(m))
    note = "multimodal checkpoint: vLLM loads and profiles the vision encoder too, which the text-only estimate leaves out";
  else if (st.value("tensor_parallel_size", 1) > 1) note = "tensor parallel: NCCL and custom all-reduce buffers vary (2.07-2.21 GiB printed); we take 2.1 GiB";
  out.push_back(row(id, "non_kv_total_gib (vLLM, per GPU)", p["non_kv_total_gib"].get<double>(), static_cast<double>(r.non_kv_total) / kGiB, 3.0, note));
  out.push_back(row(id, "available_kv_cache_gib (vLLM)", p["available_kv_cache_gib"].get<double>(), static_cast<double>(r.available_kv) / kGiB, 3.0, note));
  out.push_back(row(id, "max_concurrency_x (vLLM)", p["max_concurrency_x"].get<double>(), r.kv.max_concurrency, 3.0, note));
}

// A setting printed as a number or as "1024 (from ...)": its leading whole number, else `fallback`.
uint64_t leading_number(const nlohmann::json& v, uint64_t fallback) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (!v.is_string()) return fallback;
  const std::string s = v.get<std::string>();
  uint64_t n = 0;
  size_t i = 0;
  for (; i < s.size() && i < 12 && std::isdigit(static_cast<unsigned char>(s[i])); ++i) n = n * 10 + static_cast<uint64_t>(s[i] - '0');
  return i ? n : fallback;
}

// llama.cpp logs from public threads: the KV and recurrent buffers it printed (MiB, 2 decimals).
void llamacpp_log_rows(const nlohmann::json& c, const nlohmann::json& aliases, std::vector<ValidationRow>& out) {
  const std::string id = c.value("id", "?");
  const std::string source = c.value("model_source", "");
  if (!aliases.contains(source)) return;
  const Model* m = Catalogue::builtin().find(aliases[source].get<std::string>());
  if (!m) return;
  const auto& st = c["settings"];
  const auto& p = c["printed"];
  LlamaCppSettings s;
  s.n_ctx = leading_number(st.value("ctx_size", nlohmann::json(4096)), 4096);
  s.n_seq = leading_number(st.value("parallel", nlohmann::json(1)), 1);
  s.n_ubatch = leading_number(st.value("ubatch_size", nlohmann::json(512)), 512);
  s.type_k = upper(st.value("cache_type_k", "f16"));
  s.type_v = upper(st.value("cache_type_v", "f16"));
  LlamaCppMemory mem = llamacpp_memory(*m, s);
  constexpr double kMiB = 1048576.0;
  if (p.contains("kv_cache_mib")) {
    out.push_back(row(id, "kv_cache_bytes (llama.cpp log)", p["kv_cache_mib"].get<double>() * kMiB,
                      static_cast<double>(mem.kv_k_bytes + mem.kv_v_bytes + mem.swa_k_bytes + mem.swa_v_bytes), 0.5));
  }
  if (p.contains("rs_buffer_cuda0_mib")) {
    out.push_back(row(id, "recurrent_state_bytes (llama.cpp log)", p["rs_buffer_cuda0_mib"].get<double>() * kMiB,
                      static_cast<double>(mem.rs_r_bytes + mem.rs_s_bytes), 0.5));
  }
}

void engine_log_rows(const std::filesystem::path& dir, std::vector<ValidationRow>& out) {
  auto cases = read_json(dir / "engine-logs" / "cases.json");
  auto aliases = nlohmann::json::parse(embedded::file_text("engine_aliases.json"))["aliases"];
  for (const auto& c : cases) {
    const std::string id = c.value("id", "?");
    if (c.value("engine", "") == "llama.cpp") {
      llamacpp_log_rows(c, aliases, out);
      continue;
    }
    if (c.value("engine", "") != "vllm") continue;
    const auto& p = c["printed"];
    if (!p.contains("available_kv_cache_gib") || !p.contains("kv_cache_tokens")) continue;
    const std::string repo = c.value("model_source", "");
    if (!aliases.contains(repo)) continue;
    const Model* m = Catalogue::builtin().find(aliases[repo].get<std::string>());
    if (!m) continue;
    const auto& st = c["settings"];
    VllmSettings s;
    s.available_kv_bytes = static_cast<uint64_t>(p["available_kv_cache_gib"].get<double>() * kGiB);
    s.tensor_parallel = st.value("tensor_parallel_size", 1);
    s.pipeline_parallel = st.value("pipeline_parallel_size", 1);
    s.kv_cache_dtype = st.contains("kv_cache_dtype") && st["kv_cache_dtype"].is_string() ? st["kv_cache_dtype"].get<std::string>() : "auto";
    if (st.contains("dtype") && st["dtype"].is_string()) {  // "auto (resolved bfloat16)", "float32": the first word
      const std::string d = st["dtype"].get<std::string>();
      s.dtype = d.substr(0, d.find(' '));
    }
    if (st.contains("max_model_len") && st["max_model_len"].is_number()) s.max_model_len = st["max_model_len"].get<uint64_t>();
    VllmKv kv = vllm_kv(*m, s);
    std::string note = kv.note;
    if (s.pipeline_parallel > 1) note = "pipeline parallel: the printed availability is rank 0's; vLLM gives every stage the smallest stage's blocks, which the budget rows model";
    out.push_back(row(id, "kv_cache_tokens (vLLM)", p["kv_cache_tokens"].get<double>(), static_cast<double>(kv.tokens), 2.0, note));
    budget_rows(c, *m, s, out);
  }
}

// ---- engine logs in the repository's format (tests/data/engine-logs.json) ----

// A setting printed as "auto (resolved bfloat16)": its first word; `fallback` when absent or not a string.
std::string first_word(const nlohmann::json& st, const char* key, const std::string& fallback) {
  auto it = st.find(key);
  if (it == st.end() || !it->is_string()) return fallback;
  const std::string v = it->get<std::string>();
  return v.substr(0, v.find(' '));
}

uint64_t whole(const nlohmann::json& st, const char* key, uint64_t fallback) {
  auto it = st.find(key);
  return (it != st.end() && it->is_number_unsigned()) ? it->get<uint64_t>() : fallback;
}

double number_at(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return (it != obj.end() && it->is_number()) ? it->get<double>() : 0.0;
}

// The model a case ran: a catalogue id, or the published config values stored with the case.
std::optional<Model> case_model(const nlohmann::json& c, std::string& why) {
  auto it = c.find("model");
  if (it == c.end() || !it->is_object()) {
    why = "no config.json stored for " + c.value("model_source", std::string("this model"));
    return std::nullopt;
  }
  if (it->contains("config")) return model_from_config((*it)["config"], it->value("config_source", std::string("config.json")));
  const Model* m = Catalogue::builtin().find(it->value("catalogue", std::string()));
  if (!m) {
    why = "catalogue entry missing";
    return std::nullopt;
  }
  return *m;
}

// What the case ran that the profiles do not express; empty when it can be computed.
std::string unexpressed(const nlohmann::json& c) {
  const std::string version = c.value("engine_version", "");
  if (c.value("engine", "") == "vllm" && (version.find("V0") != std::string::npos || version.rfind("0.2", 0) == 0 || version.rfind("0.6", 0) == 0 ||
                                         version.rfind("0.5", 0) == 0))
    return "vLLM V0 engine: its profile (no dummy sampler over max_num_seqs, different defaults) is not modelled";
  return "";
}

void vllm_case_rows(const nlohmann::json& c, const Model& m, const std::string& id, const std::string& set, std::vector<ValidationRow>& out) {
  const auto& st = c["settings"];
  const auto& p = c["printed"];
  VllmBudgetSettings b;
  b.kv.tensor_parallel = whole(st, "tensor_parallel_size", 1);
  b.kv.pipeline_parallel = whole(st, "pipeline_parallel_size", 1);
  b.kv.kv_cache_dtype = first_word(st, "kv_cache_dtype", "auto");
  b.kv.dtype = first_word(st, "dtype", "auto");
  b.kv.max_model_len = whole(st, "max_model_len", 8192);
  b.max_num_batched_tokens = whole(st, "max_num_batched_tokens", 0);
  b.max_num_seqs = whole(st, "max_num_seqs", 0);
  if (first_word(st, "quantization", "") == "fp8") b.quantization = "fp8";
  std::string note = m.inputs.size() <= 1 ? ""
                     : encoder_profiled(m) ? "multimodal: the profile includes the vision encoder's dummy image batch"
                                                            : "multimodal: vLLM also profiles the vision encoder, which this estimate leaves out";
  if (m.family == "generic") note = "model_type '" + m.architecture + "' read as a plain decoder (no dedicated mapper)";
  if (b.kv.pipeline_parallel > 1)
    note = "pipeline parallel: the printed figures and KV memory are rank 0's; vLLM gives every stage the smallest stage's blocks (the last's: output head "
           "and sampler), which the card rows model and the printed-memory row cannot";
  auto add = [&](const char* figure, double printed, double ours, double target) {
    ValidationRow r = row(id, figure, printed, ours, target, note);
    r.part = set;
    out.push_back(std::move(r));
  };
  if (p.contains("available_kv_cache_gib") && p.contains("kv_cache_tokens")) {
    VllmSettings kv = b.kv;
    kv.available_kv_bytes = static_cast<uint64_t>(number_at(p, "available_kv_cache_gib") * kGiB);
    add("vllm kv_tokens (from printed KV memory)", number_at(p, "kv_cache_tokens"), static_cast<double>(vllm_kv(m, kv).tokens), 2.0);
  }
  const double card_gib = number_at(p, "total_gpu_memory_gib") > 0 ? number_at(p, "total_gpu_memory_gib") : number_at(c["hardware"], "gpu_memory_gib");
  const double util = number_at(st, "gpu_memory_utilization");
  if (card_gib <= 0 || util <= 0) return;
  b.card_bytes = static_cast<uint64_t>(card_gib * kGiB);
  b.gpu_memory_utilization = util;
  b.weight_bytes = loaded_weight_bytes(m, m.native.bytes, b.kv.dtype);
  VllmBudget r = vllm_budget(m, b);
  if (p.contains("model_loading_gib")) add("vllm weights (per GPU)", number_at(p, "model_loading_gib"), static_cast<double>(r.weights) / kGiB, 3.0);
  if (p.contains("torch_peak_increase_gib")) add("vllm activation (torch peak increase)", number_at(p, "torch_peak_increase_gib"), static_cast<double>(r.activation) / kGiB, 5.0);
  if (p.contains("non_torch_increase_gib")) add("vllm non-torch memory", number_at(p, "non_torch_increase_gib"), static_cast<double>(r.non_torch) / kGiB, 10.0);
  if (p.contains("non_kv_total_gib")) add("vllm non-KV total (from the card)", number_at(p, "non_kv_total_gib"), static_cast<double>(r.non_kv_total) / kGiB, 3.0);
  if (p.contains("kv_cache_tokens")) add("vllm kv_tokens (from the card)", number_at(p, "kv_cache_tokens"), static_cast<double>(r.kv.tokens), 2.0);
  // CUDA graphs: what the capture took ("Graph capturing finished ... took"), else vLLM's own estimate.
  const char* graph_key = p.contains("graph_capture_gib") ? "graph_capture_gib" : "cuda_graph_estimate_gib";
  if (p.contains(graph_key)) add("vllm CUDA graph memory", number_at(p, graph_key), static_cast<double>(r.cuda_graphs) / kGiB, 20.0);
}

void sglang_case_rows(const nlohmann::json& c, const Model& m, const std::string& id, const std::string& set, std::vector<ValidationRow>& out) {
  const auto& st = c["settings"];
  const auto& p = c["printed"];
  if (!p.contains("kv_cache_tokens")) return;
  SglangSettings s;
  s.card_bytes = static_cast<uint64_t>(number_at(c["hardware"], "gpu_memory_gib") * kGiB);
  s.tensor_parallel = whole(st, "tp", 1);
  s.gpu_link = parse_gpu_link(c["hardware"].value("link", ""), id + ": hardware.link");
  s.rocm = c["hardware"].value("vendor", "") == "amd";  // an AMD GPU runs SGLang's ROCm build
  s.disable_custom_all_reduce = st.value("disable_custom_all_reduce", false);
  if (number_at(st, "mem_fraction_static") > 0) s.mem_fraction_static = number_at(st, "mem_fraction_static");
  s.kv_cache_dtype = first_word(st, "kv_cache_dtype", "auto");
  if (auto v = whole(st, "context_length", 0)) s.context_length = v;
  if (auto v = whole(st, "chunked_prefill_size", 0)) s.chunked_prefill_size = static_cast<int64_t>(v);
  if (auto v = whole(st, "cuda_graph_max_bs", 0)) s.cuda_graph_max_bs = v;
  if (auto v = whole(st, "page_size", 0)) s.page_size = v;
  if (auto v = whole(st, "max_running_requests", 0)) s.max_running_requests = v;
  if (auto v = whole(st, "max_total_tokens", 0)) s.max_total_tokens = v;
  if (auto v = whole(st, "max_mamba_cache_size", 0)) s.max_mamba_cache_size = v;
  s.mamba_ssm_dtype = first_word(st, "mamba_ssm_dtype", "float32");
  s.disable_radix_cache = st.value("disable_radix_cache", false);
  s.weight_bytes = m.native.bytes;
  auto add = [&](const char* figure, const char* slots_figure, const SglangProfile& prof) {
    std::string note;
    for (const auto& n : prof.notes) note += (note.empty() ? "" : "; ") + n;
    ValidationRow r = row(id, figure, number_at(p, "kv_cache_tokens"), static_cast<double>(prof.max_total_num_tokens), 3.0, note);
    r.part = set;
    out.push_back(std::move(r));
    // Hybrid recurrent models: the state pool's request slots ("Mamba Cache is allocated. max_mamba_cache_size").
    if (p.contains("max_mamba_cache_size")) {
      ValidationRow slots = row(id, slots_figure, number_at(p, "max_mamba_cache_size"), static_cast<double>(prof.state_slots), 3.0, note);
      slots.part = set;
      out.push_back(std::move(slots));
    }
  };
  // From the free memory the log printed before the weights (and the weights, when printed): the
  // pool rule alone (geometry, state pool, mem_fraction_static), without the runtime constant.
  if (p.contains("load_weight_begin_avail_gib")) {
    SglangSettings printed = s;
    const double before = number_at(p, "load_weight_begin_avail_gib");
    printed.free_before_weights = static_cast<uint64_t>(before * kGiB);
    if (p.contains("weights_gib")) printed.loaded_weights = static_cast<uint64_t>(number_at(p, "weights_gib") * kGiB);
    else if (p.contains("load_weight_end_avail_gib")) printed.loaded_weights = static_cast<uint64_t>((before - number_at(p, "load_weight_end_avail_gib")) * kGiB);
    if (printed.card_bytes < *printed.free_before_weights) printed.card_bytes = *printed.free_before_weights;
    add("sglang token pool (from printed free memory)", "sglang state slots (from printed free memory)", sglang_profile(m, printed));
  }
  // --cpu-offload-gb keeps part of the weights in host memory, and a quantized checkpoint loads at
  // another tier than the catalogue's native bytes: the weights on the GPU are what the log printed,
  // not the checkpoint over the ranks, so only the row above applies.
  const bool other_weights = st.contains("cpu_offload_gb") || (st.contains("quantization") && !st["quantization"].is_null());
  if (s.card_bytes == 0 || other_weights) return;
  const SglangProfile card = sglang_profile(m, s);
  add("sglang token pool (from the card)", "sglang state slots (from the card)", card);
  // The weights one rank holds ("Load weight end ... mem usage"): shown for the diagnosis.
  if (p.contains("weights_gib")) {
    ValidationRow w = row(id, "sglang weights (per GPU)", number_at(p, "weights_gib"), static_cast<double>(card.weights) / kGiB, 3.0);
    w.part = set;
    out.push_back(std::move(w));
  }
}

// A CUDA build's cases (llamacpp-cuda-measured.json): each buffer type's model, context and
// compute bytes beside ours. Model bytes within 1%, context exact, compute within 3% (issue
// targets); a figure both sides put at zero gets no row.
std::vector<ValidationRow> cuda_measured_rows(const MeasuredLlamaCpp& set) {
  std::vector<ValidationRow> rows;
  for (const auto& c : set.cases) {
    const Model& model = set.find(c.model)->model;
    const std::string part = c.set_aside ? "set-aside" : "fitted";
    const std::string offload = c.n_gpu_layers >= model.layers.size() + 1 ? (c.override_tensor.empty() ? "full offload" : "-ot " + c.override_tensor)
                                                                           : "partial offload";
    LlamaCppPlacementSettings placement;
    placement.n_gpu_layers = c.n_gpu_layers;
    if (!c.override_tensor.empty()) placement.overrides = parse_overrides(c.override_tensor);
    if (!c.created) {
      ValidationRow r;
      try {
        llamacpp_cuda_buffers(model, c.settings, placement);
        r = row(c.id, "cuda refusal (llama.cpp created no context)", 1, 0, 0, (c.errors.empty() ? "llama.cpp refused these settings" : c.errors.front()) + "; we computed a size");
      } catch (const InputError&) {
        r = row(c.id, "cuda refusal (llama.cpp created no context)", 1, 1, 0);
      }
      r.part = part;
      rows.push_back(std::move(r));
      continue;
    }
    const LlamaCppBuffers ours = llamacpp_cuda_buffers(model, c.settings, placement);
    std::set<std::string> names;
    for (const auto& [n, b] : c.buffers) names.insert(n);
    for (const auto& [n, b] : ours) names.insert(n);
    for (const auto& n : names) {
      const auto mi = c.buffers.find(n);
      const auto oi = ours.find(n);
      const LlamaCppBufferBytes measured = mi == c.buffers.end() ? LlamaCppBufferBytes{} : mi->second;
      const LlamaCppBufferBytes mine = oi == ours.end() ? LlamaCppBufferBytes{} : oi->second;
      auto add = [&](const char* what, uint64_t printed, uint64_t computed, double target) {
        if (printed == 0 && computed == 0) return;
        ValidationRow r = row(c.id, fmt::format("cuda {} {} ({})", n, what, offload), static_cast<double>(printed), static_cast<double>(computed), target);
        r.part = part;
        rows.push_back(std::move(r));
      };
      add("model", measured.model, mine.model, 1.0);
      add("context", measured.context, mine.context, 0.0);
      add("compute", measured.compute, mine.compute, 3.0);
    }
  }
  return rows;
}

}  // namespace

std::vector<ValidationRow> validate_engine_logs(const std::string& file) {
  auto doc = read_json(file);
  if (!doc.is_object() || !doc.contains("cases") || !doc["cases"].is_array())
    throw InputError(file, "expected an object with a \"cases\" array (tests/data/engine-logs.json format)");
  std::vector<ValidationRow> out;
  for (const auto& c : doc["cases"]) {
    const std::string id = c.value("id", "?");
    const std::string engine = c.value("engine", "");
    const std::string set = c.value("set", "");
    if (engine != "vllm" && engine != "sglang") continue;  // llama.cpp logs: validate_reference's runs
    auto skip = [&](const std::string& why) {
      ValidationRow r = row(id, engine + " (not computed)", 0, 0, 0, why);
      r.part = set;
      r.computed = false;
      out.push_back(std::move(r));
    };
    std::string why;
    std::optional<Model> m;
    try {
      m = case_model(c, why);
    } catch (const InputError& e) {
      why = std::string("config not read: ") + e.what();
    }
    if (!m) {
      skip(why);
      continue;
    }
    if (std::string u = unexpressed(c); !u.empty()) {
      skip(u);
      continue;
    }
    try {
      if (engine == "vllm") vllm_case_rows(c, *m, id, set, out);
      else sglang_case_rows(c, *m, id, set, out);
    } catch (const InputError& e) {
      skip(std::string("settings not expressible: ") + e.what());
    }
  }
  return out;
}

std::vector<ValidationRow> validate_measured(const std::string& measured_json) {
  const MeasuredLlamaCpp set = read_llamacpp_measured(measured_json);
  std::vector<ValidationRow> rows;
  auto part = [](bool aside) { return std::string(aside ? "set-aside" : "fitted"); };
  for (const auto& m : set.models) {
    const double measured = static_cast<double>(m.mapped_bytes + m.repack_bytes);
    ValidationRow r = row(m.name, "cpu_model_bytes (mapped + repacked)", measured, static_cast<double>(llamacpp_cpu_weights({m.header}).total()), 1.0);
    r.part = part(m.set_aside);
    rows.push_back(r);
    if (m.peer_estimate) {
      ValidationRow p = row(m.name, "peer: node-llama-cpp cpu_model_bytes", measured, static_cast<double>(*m.peer_estimate), 1.0);
      p.part = r.part;
      rows.push_back(p);
    }
  }
  if (set.per_buffer) return cuda_measured_rows(set);
  for (const auto& c : set.cases) {
    const Model& model = set.find(c.model)->model;
    std::vector<ValidationRow> mine;
    if (!c.created) {
      const std::string why = c.errors.empty() ? "llama.cpp refused these settings" : c.errors.front();
      try {
        llamacpp_memory(model, c.settings);
        mine.push_back(row(c.id, "refusal (llama.cpp created no context)", 1, 0, 0, why + "; we computed a size"));
      } catch (const InputError&) {
        mine.push_back(row(c.id, "refusal (llama.cpp created no context)", 1, 1, 0));
      }
    } else {
      const LlamaCppMemory mem = llamacpp_memory(model, c.settings);
      mine.push_back(row(c.id, "context_bytes (KV + recurrent)", static_cast<double>(c.context_bytes), static_cast<double>(mem.context_bytes()), 0));
      mine.push_back(row(c.id, "compute_bytes (scheduler buffer)", static_cast<double>(c.compute_bytes), static_cast<double>(mem.compute_bytes), 3.0));
      const double both = static_cast<double>(c.context_bytes + c.compute_bytes);
      mine.push_back(row(c.id, "context + compute bytes", both, static_cast<double>(mem.context_bytes() + mem.compute_bytes), 3.0));
      if (c.peer_estimate) mine.push_back(row(c.id, "peer: node-llama-cpp context + compute", both, static_cast<double>(*c.peer_estimate), 3.0));
    }
    for (auto& r : mine) {
      r.part = part(c.set_aside);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::vector<ValidationRow> validate_reference(const std::string& reference_dir) {
  std::vector<ValidationRow> rows;
  llamacpp_rows(reference_dir, rows);
  engine_log_rows(reference_dir, rows);
  return rows;
}

}  // namespace vc
