#include "engines/engine_log.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catalogue/catalogue.h"
#include "catalogue/embedded_data.h"
#include "core/error.h"
#include "engines/llamacpp_profile.h"
#include "engines/log_text.h"
#include "engines/serving_dtype.h"
#include "sources/resolver.h"

namespace vc {
namespace {

constexpr size_t kMaxLog = 16u << 20;
constexpr double kGiB = 1073741824.0;
constexpr double kMiB = 1048576.0;
const char* const kExpected =
    "expected a start-up log of vLLM (lines such as \"GPU KV cache size: N tokens\" or \"Available KV cache memory\"), SGLang (\"KV Cache is "
    "allocated. #tokens:\" or \"max_total_num_tokens=\") or llama.cpp (\"llama_kv_cache\" / \"llama_context: n_ctx\")";

double to_number(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return 0;
  }
}

// A figure no engine could print (negative, or beyond 2^53) is refused: converting it to an
// integer would be undefined.
constexpr double kLargestExact = 9007199254740992.0;

// The count `s` spells (a leading minus taken when `sign` allows it), or InputError naming it.
double checked_count(const std::string& s, bool sign) {
  const std::size_t first = sign && !s.empty() && s[0] == '-' ? 1 : 0;
  const double v = s.size() > first && std::isdigit(static_cast<unsigned char>(s[first])) ? to_number(s) : -kLargestExact * 2;
  if (!(v >= (sign ? -kLargestExact : 0) && v <= kLargestExact)) throw InputError("--log", "prints '" + s.substr(0, 40) + "' where it prints a count");
  return v;
}

uint64_t to_count(const std::string& s) { return static_cast<uint64_t>(checked_count(s, false)); }
int64_t to_signed(const std::string& s) { return static_cast<int64_t>(checked_count(s, true)); }

uint64_t gib_bytes(double gib) {
  const double bytes = gib * kGiB;
  if (!(bytes >= 0 && bytes <= kLargestExact)) throw InputError("--log", "prints a memory figure no GPU has");
  return static_cast<uint64_t>(bytes);
}

using log_text::Lit;
using log_text::number;
using log_text::setting;

// Figures are printed as "12.5 GiB" or "12.5GiB".
Lit gib() { return {"GiB", true}; }
Lit gb() { return {"GB", true}; }

bool present(const std::string& v) { return !v.empty() && v != "None" && v != "null"; }

void parse_vllm(const std::string& text, EngineLog& log) {
  auto& v = log.run.vllm;
  log.model = setting(text, "model");
  if (!present(log.model)) log.model = setting(text, "model_tag");
  if (auto s = setting(text, "max_model_len"); present(s)) v.kv.max_model_len = to_count(s);
  else if (auto t = setting(text, "max_seq_len"); present(t)) v.kv.max_model_len = to_count(t);
  if (auto s = setting(text, "gpu_memory_utilization"); present(s)) v.gpu_memory_utilization = to_number(s);
  if (auto s = setting(text, "tensor_parallel_size"); present(s)) v.kv.tensor_parallel = to_count(s);
  if (auto s = setting(text, "pipeline_parallel_size"); present(s)) v.kv.pipeline_parallel = to_count(s);
  if (auto s = setting(text, "kv_cache_dtype"); present(s)) v.kv.kv_cache_dtype = s;
  if (auto s = setting(text, "dtype"); present(s)) v.kv.dtype = s.rfind("torch.", 0) == 0 ? s.substr(6) : s;
  if (auto s = setting(text, "max_num_seqs"); present(s)) v.max_num_seqs = to_count(s);
  if (auto s = setting(text, "max_num_batched_tokens"); present(s)) v.max_num_batched_tokens = to_count(s);
  if (auto s = setting(text, "block_size"); present(s)) v.kv.block_size = to_count(s);
  if (setting(text, "quantization") == "fp8") v.quantization = "fp8";
  if (auto s = number(text, {"Model loading took "}, gib()); !s.empty()) log.printed["weights_gib"] = to_number(s);
  if (auto m = log_text::numbers(text, {{"Requested memory: "}, {" (util), "}, gib()}); !m.empty()) {
    const double util = to_number(m[0]), requested = to_number(m[1]);
    v.gpu_memory_utilization = util;
    if (util > 0) log.card_bytes = gib_bytes(requested / util);
  }
  if (auto s = number(text, {"Total non KV cache memory: "}, gib()); !s.empty()) log.printed["non_kv_total_gib"] = to_number(s);
  if (auto s = number(text, {"torch peak memory increase: "}, gib()); !s.empty()) log.printed["activation_gib"] = to_number(s);
  if (auto s = number(text, {"non-torch forward increase memory: "}, gib()); !s.empty()) log.printed["non_torch_gib"] = to_number(s);
  if (auto s = number(text, {"Available KV cache memory: "}, gib()); !s.empty()) log.printed["available_kv_gib"] = to_number(s);
  if (auto s = number(text, {"GPU KV cache size: "}, {" tokens"}); !s.empty()) log.printed["kv_tokens"] = to_number(s);
  if (auto m = log_text::numbers(text, {{"Maximum concurrency for "}, {" tokens per request: "}, {"x"}}); !m.empty()) {
    v.kv.max_model_len = to_count(m[0]);
    log.printed["max_concurrency_x"] = to_number(m[1]);
  }
}

// The number after `key` on the first line that holds `marker` before it ("Load weight end. ...
// mem usage=3.76 GB"), or "".
std::string number_later_on_line(const std::string& text, std::string_view marker, std::string_view key) {
  // One look per line: the next search starts past the line just read (linear in the text).
  for (std::size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at)) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, end - at);
    if (auto s = number(line, {key}, gb()); !s.empty()) return s;
    at = end;
  }
  return "";
}

void parse_sglang(const std::string& text, EngineLog& log) {
  auto& g = log.run.sglang;
  log.model = setting(text, "model_path");
  if (auto s = setting(text, "tp_size"); present(s)) g.tensor_parallel = to_count(s);
  if (auto s = setting(text, "pp_size"); present(s)) g.pipeline_parallel = to_count(s);
  if (auto s = setting(text, "mem_fraction_static"); present(s)) g.mem_fraction_static = to_number(s);
  if (auto s = setting(text, "context_length"); present(s)) g.context_length = to_count(s);
  if (auto s = setting(text, "kv_cache_dtype"); present(s)) g.kv_cache_dtype = s;
  if (auto s = setting(text, "dtype"); present(s)) g.dtype = s;
  if (auto s = setting(text, "max_running_requests"); present(s)) g.max_running_requests = to_count(s);
  if (auto s = setting(text, "chunked_prefill_size"); present(s)) g.chunked_prefill_size = to_signed(s);
  if (auto s = setting(text, "cuda_graph_max_bs"); present(s)) g.cuda_graph_max_bs = to_count(s);
  if (auto s = setting(text, "page_size"); present(s)) g.page_size = to_count(s);
  if (auto s = setting(text, "max_total_tokens"); present(s)) g.max_total_tokens = to_count(s);
  if (auto s = setting(text, "max_mamba_cache_size"); present(s)) g.max_mamba_cache_size = to_count(s);
  if (auto s = setting(text, "mamba_full_memory_ratio"); present(s)) g.mamba_full_memory_ratio = to_number(s);
  if (auto s = setting(text, "mamba_ssm_dtype"); present(s) && (s == "float32" || s == "bfloat16")) g.mamba_ssm_dtype = s;
  if (auto s = setting(text, "disable_radix_cache"); s == "True") g.disable_radix_cache = true;
  if (auto s = setting(text, "disable_custom_all_reduce"); s == "True") g.disable_custom_all_reduce = true;
  // custom_all_reduce.py says so when the GPUs are joined by PCIe only.
  if (text.find("not supported on more than two PCIe-only GPUs") != std::string::npos) g.gpu_link = GpuLink::Pcie;
  if (auto s = number(text, {"Load weight begin. avail mem="}, gb()); !s.empty()) {
    log.free_before_weights = gib_bytes(to_number(s));  // SGLang's "GB" is bytes / 2^30
    log.printed["free_before_weights_gib"] = to_number(s);
  }
  if (auto s = number_later_on_line(text, "Load weight end.", "mem usage="); !s.empty()) log.printed["weights_gib"] = to_number(s);
  // Without the "begin" line: SGLang's "mem usage" is the free memory before less the free memory
  // after the weights, so before = "avail mem" + "mem usage" of the "end" line.
  if (auto after = number_later_on_line(text, "Load weight end.", "avail mem="); !log.free_before_weights && !after.empty() && log.printed.count("weights_gib")) {
    log.free_before_weights = gib_bytes(to_number(after) + log.printed["weights_gib"]);
    log.notes.push_back("free memory before the weights taken as the \"Load weight end\" line's avail mem + mem usage (no \"Load weight begin\" line)");
  }
  // Hybrid recurrent models: the state pool's request slots.
  if (auto s = number(text, {"Mamba Cache is allocated. max_mamba_cache_size: "}, {""}); !s.empty()) log.printed["state_slots"] = to_number(s);
  if (auto s = number(text, {"#tokens: "}, {""}); !s.empty()) log.printed["kv_tokens"] = to_number(s);
  if (auto s = number(text, {"max_total_num_tokens="}, {""}); !s.empty()) log.printed["kv_tokens"] = to_number(s);
  if (auto s = number(text, {"max_running_requests="}, {""}); !s.empty()) log.printed["max_running_requests"] = to_number(s);
  if (auto s = number(text, {"context_len="}, {""}); !s.empty() && g.context_length == 0) g.context_length = to_count(s);
}

// The GGUF path of "llama_model_loader: loaded meta data with ... from PATH (version ...)": the
// first line's text after its last " from ", up to a space.
std::string loaded_model(const std::string& text) {
  const std::string_view marker = "loaded meta data with ";
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const std::size_t end = std::min(text.find('\n', at), text.size());
  const std::string_view line(text.data() + at + marker.size(), end - at - marker.size());
  const std::size_t from = line.rfind(" from ");
  if (from == std::string_view::npos) return "";
  const std::string_view rest = line.substr(from + 6);
  return std::string(rest.substr(0, rest.find(' ')));
}

double sum_of(const std::vector<std::string>& numbers) {
  double sum = 0;
  for (const auto& n : numbers) sum += to_number(n);
  return sum;
}

void parse_llamacpp(const std::string& text, EngineLog& log) {
  auto& l = log.run.llamacpp;
  log.model = loaded_model(text);
  if (auto s = log_text::padded_value(text, "n_ctx"); !s.empty()) l.n_ctx = to_count(s);
  if (auto s = log_text::padded_value(text, "n_seq_max"); !s.empty()) l.n_seq = to_count(s);
  if (auto s = log_text::padded_value(text, "n_batch"); !s.empty()) l.n_batch = to_count(s);
  if (auto s = log_text::padded_value(text, "n_ubatch"); !s.empty()) l.n_ubatch = to_count(s);
  if (auto s = log_text::padded_value(text, "flash_attn"); !s.empty()) l.flash_attn = !(s == "0" || s == "disabled" || s == "false");
  if (auto s = log_text::word_between(text, "K (", "):"); !s.empty()) l.type_k = s;
  if (auto s = log_text::word_between(text, "V (", "):"); !s.empty()) l.type_v = s;
  for (auto& c : l.type_k) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (auto& c : l.type_v) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // The cache: each device's "KV buffer size" line; a log without them (an excerpt) has the
  // "llama_kv_cache: size = N MiB (...)" total, which sums the same buffers.
  const double buffers = sum_of(log_text::every_number(text, {"KV buffer size = "}, {" MiB"}));
  double totals = 0;
  for (std::size_t at = text.find("llama_kv_cache"); at != std::string::npos; at = text.find("llama_kv_cache", at)) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, end - at);
    if (line.find(": size = ") != std::string_view::npos) totals += to_number(number(line, {": size = "}, {" MiB"}));
    at = end;  // one total per line
  }
  const double kv = buffers > 0 ? buffers : totals;
  if (kv > 0) log.printed["kv_mib"] = kv;
  const double compute = sum_of(log_text::every_number(text, {" compute buffer size = "}, {" MiB"}));
  if (compute > 0) log.printed["compute_mib"] = compute;
}

ValidationRow beside(const std::string& figure, double printed, double ours, double target) {
  ValidationRow r;
  r.case_id = "log";
  r.figure = figure;
  r.printed = printed;
  r.ours = ours;
  r.error_percent = printed != 0 ? (ours - printed) / printed * 100.0 : 0;
  r.target_percent = target;
  r.met = std::fabs(r.error_percent) <= target;
  return r;
}

}  // namespace

EngineLog parse_engine_log(const std::string& text) {
  if (text.size() > kMaxLog) throw InputError("--log", "is larger than 16 MiB; paste the start-up part of the log");
  EngineLog log;
  const bool vllm = text.find("GPU KV cache size") != std::string::npos || text.find("Available KV cache memory") != std::string::npos ||
                    text.find("non KV cache memory") != std::string::npos || text.find("vllm") != std::string::npos;
  const bool sglang = text.find("KV Cache is allocated") != std::string::npos || text.find("max_total_num_tokens=") != std::string::npos ||
                      text.find("sglang") != std::string::npos || text.find("ServerArgs(") != std::string::npos;
  const bool llamacpp = text.find("llama_kv_cache") != std::string::npos || text.find("llama_context:") != std::string::npos;
  if (sglang && !llamacpp && text.find("GPU KV cache size") == std::string::npos) {
    log.engine = "sglang";
    log.run.engine = EngineKind::Sglang;
    parse_sglang(text, log);
  } else if (llamacpp) {
    log.engine = "llamacpp";
    log.run.engine = EngineKind::LlamaCpp;
    parse_llamacpp(text, log);
  } else if (vllm) {
    log.engine = "vllm";
    log.run.engine = EngineKind::Vllm;
    parse_vllm(text, log);
  } else {
    throw InputError("--log", kExpected);
  }
  if (log.printed.empty()) throw InputError("--log", std::string("names ") + log.engine + " but prints none of its memory figures; " + kExpected);
  return log;
}

const Model* log_catalogue_model(const std::string& name) {
  if (const Model* m = Catalogue::builtin().find(name)) return m;
  const auto aliases = nlohmann::json::parse(embedded::file_text("engine_aliases.json"))["aliases"];
  return aliases.contains(name) ? Catalogue::builtin().find(aliases[name].get<std::string>()) : nullptr;
}

Model log_model(const EngineLog& log, const std::string& model_override) {
  const std::string name = model_override.empty() ? log.model : model_override;
  if (name.empty()) throw InputError("--model", "the log does not name its model; pass --model (a catalogue id, config.json, .gguf or hf:ORG/REPO)");
  if (const Model* m = log_catalogue_model(name)) return *m;
  return resolve_model(name, "--model");
}

std::vector<ValidationRow> compare_engine_log(const EngineLog& log, const Model& model, std::optional<uint64_t> card_override) {
  std::vector<ValidationRow> rows;
  auto printed = [&](const char* key) -> std::optional<double> {
    auto it = log.printed.find(key);
    return it == log.printed.end() ? std::nullopt : std::optional<double>(it->second);
  };
  const std::optional<uint64_t> card = card_override ? card_override : log.card_bytes;
  if (log.engine == "vllm") {
    VllmBudgetSettings b = log.run.vllm;
    if (auto kv = printed("available_kv_gib"); kv && printed("kv_tokens")) {
      VllmSettings s = b.kv;
      s.available_kv_bytes = gib_bytes(*kv);
      rows.push_back(beside("KV cache tokens (from the printed KV memory)", *printed("kv_tokens"), static_cast<double>(vllm_kv(model, s).tokens), 2.0));
    }
    if (!card) {
      ValidationRow r = beside("budget from the card", 0, 0, 0);
      r.computed = false;
      r.note = "the log prints no \"Requested memory\" line; pass --gpu-memory for the whole budget";
      rows.push_back(r);
      return rows;
    }
    b.card_bytes = *card;
    b.weight_bytes = loaded_weight_bytes(model, model.native.bytes, b.kv.dtype);
    VllmBudget r = vllm_budget(model, b);
    if (auto p = printed("weights_gib")) rows.push_back(beside("weights per GPU (GiB)", *p, static_cast<double>(r.weights) / kGiB, 3.0));
    if (auto p = printed("activation_gib")) rows.push_back(beside("torch peak memory increase (GiB)", *p, static_cast<double>(r.activation) / kGiB, 5.0));
    if (auto p = printed("non_torch_gib")) rows.push_back(beside("non-torch memory (GiB)", *p, static_cast<double>(r.non_torch) / kGiB, 10.0));
    if (auto p = printed("non_kv_total_gib")) rows.push_back(beside("total non KV cache memory (GiB)", *p, static_cast<double>(r.non_kv_total) / kGiB, 3.0));
    if (auto p = printed("available_kv_gib")) rows.push_back(beside("available KV cache memory (GiB)", *p, static_cast<double>(r.available_kv) / kGiB, 3.0));
    if (auto p = printed("kv_tokens")) rows.push_back(beside("GPU KV cache size (tokens)", *p, static_cast<double>(r.kv.tokens), 2.0));
    if (auto p = printed("max_concurrency_x")) rows.push_back(beside("maximum concurrency (x)", *p, r.kv.max_concurrency, 2.0));
  } else if (log.engine == "sglang") {
    SglangSettings s = log.run.sglang;
    if (!card && !log.free_before_weights) throw InputError("--gpu-memory", "the log prints neither the card nor \"Load weight begin. avail mem\"; pass --gpu-memory");
    s.free_before_weights = log.free_before_weights;
    s.card_bytes = card ? *card : *log.free_before_weights + (1ull << 29);  // SGLang prints the free memory only; the choice of mem_fraction_static needs the card
    s.weight_bytes = model.native.bytes;
    SglangProfile p = sglang_profile(model, s);
    if (auto v = printed("weights_gib")) rows.push_back(beside("weights per GPU (GiB)", *v, static_cast<double>(p.weights) / kGiB, 3.0));
    if (auto v = printed("kv_tokens")) rows.push_back(beside("token pool (max_total_num_tokens)", *v, static_cast<double>(p.max_total_num_tokens), 3.0));
    if (auto v = printed("max_running_requests")) rows.push_back(beside("max_running_requests", *v, static_cast<double>(p.max_running_requests), 0.0));
    if (auto v = printed("state_slots")) rows.push_back(beside("state slots (max_mamba_cache_size)", *v, static_cast<double>(p.state_slots), 3.0));
  } else {
    LlamaCppMemory m = llamacpp_memory(model, log.run.llamacpp);
    if (auto v = printed("kv_mib")) rows.push_back(beside("KV cache (MiB)", *v, static_cast<double>(m.context_bytes()) / kMiB, 0.5));
    if (auto v = printed("compute_mib")) rows.push_back(beside("compute buffers (MiB)", *v, static_cast<double>(m.compute_bytes) / kMiB, 3.0));
  }
  return rows;
}

}  // namespace vc
