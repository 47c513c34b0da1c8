#include "sources/config/native_checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/checked.h"
#include "core/text.h"
#include "core/units.h"
#include "model/quant.h"

namespace vc {
namespace {

bool mentions(const nlohmann::json& list, const std::string& needle) {
  if (!list.is_array()) return false;
  for (const auto& e : list) {
    if (e.is_string() && lower(e.get<std::string>()).find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string unquantized_dtype(ConfigView& cfg) {
  std::string d = lower(cfg.str("torch_dtype", cfg.str("dtype", "bfloat16")));
  if (d == "float32") return "F32";
  if (d == "float16") return "F16";
  return "BF16";
}

// Hostile configs may put any type anywhere: read leniently, never throw a JSON type error.
std::string string_at(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return (it != obj.end() && it->is_string()) ? it->get<std::string>() : std::string();
}
int64_t int_at(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return (it != obj.end() && it->is_number_integer()) ? it->get<int64_t>() : 0;
}
bool bool_at(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

// compressed-tensors: the weight scheme of the first config group (num_bits, type, group_size,
// strategy), as llm-compressor writes it; empty when it names no format we model.
std::string compressed_tensors_format(const nlohmann::json& q) {
  auto groups = q.find("config_groups");
  if (groups == q.end() || !groups->is_object()) return "";
  for (const auto& [name, group] : groups->items()) {
    if (!group.is_object() || !group.contains("weights") || !group["weights"].is_object()) continue;
    const auto& w = group["weights"];
    const int64_t bits = int_at(w, "num_bits");
    const int64_t size = int_at(w, "group_size");
    const std::string type = lower(string_at(w, "type"));
    const std::string strategy = lower(string_at(w, "strategy"));
    if (type == "float" && bits == 8) return "FP8_E4M3";
    if (type == "float" && bits == 4) return size == 32 ? "MXFP4" : "NVFP4";  // MX blocks of 32, NV blocks of 16
    if (type == "int" && bits == 4) return size == 32 ? "INT4_G32" : "INT4_G128";  // group 128 and per-channel scales alike: ~4.1 bits
    if (type == "int" && bits == 8) return strategy == "group" ? "Q8_0" : "INT8_ROWWISE";
    return "";
  }
  return "";
}

}  // namespace

void apply_native_checkpoint(ConfigView& cfg) {
  Model& m = cfg.model();
  const QuantTable& table = QuantTable::builtin();
  const std::string base = unquantized_dtype(cfg);
  const QuantFormat* base_fmt = table.find_type(base);

  const nlohmann::json* q = cfg.object("quantization_config");
  std::string quant_name;
  std::set<ParamClass> quantized;
  // MTP layers are decoder layers too: DeepSeek-V3's layer 61 ships in FP8 like the stack.
  const std::set<ParamClass> linear = {ParamClass::Attention, ParamClass::DenseMlp, ParamClass::RoutedExperts, ParamClass::SharedExperts,
                                       ParamClass::Mtp};
  if (q) {
    std::string method = lower(string_at(*q, "quant_method"));
    std::string format = lower(string_at(*q, "format"));
    nlohmann::json skip = q->contains("ignore") ? (*q)["ignore"]
                          : q->contains("llm_int8_skip_modules") ? (*q)["llm_int8_skip_modules"]
                          : q->contains("modules_to_not_convert") ? (*q)["modules_to_not_convert"]
                                                                  : nlohmann::json::array();
    if (!skip.is_array()) skip = nlohmann::json::array();
    if (method == "fp8") quant_name = "FP8";
    else if (method == "mxfp4" || format.find("mxfp4") != std::string::npos) quant_name = "MXFP4";
    else if (format.find("nvfp4") != std::string::npos || method == "modelopt") quant_name = "NVFP4";
    else if (method == "compressed-tensors" && !compressed_tensors_format(*q).empty()) quant_name = compressed_tensors_format(*q);
    else if (format == "pack-quantized") quant_name = "INT4_G32";
    else if (format == "float-quantized") quant_name = "FP8_E4M3";
    else if (method == "awq" || method == "gptq") {
      const int64_t bits = int_at(*q, "bits") ? int_at(*q, "bits") : int_at(*q, "w_bit");
      const int64_t group = int_at(*q, "group_size") ? int_at(*q, "group_size") : int_at(*q, "q_group_size");
      if (bits == 4 && group == 128) quant_name = "INT4_G128";
      else if (bits == 4 && group == 32) quant_name = "INT4_G32";
      else if (bits == 8) quant_name = "Q8_0";  // 8-bit with a scale per group of 32 or more: 8.5 bits errs high
      else cfg.warn("quantization_config " + method + " with " + std::to_string(bits) + " bits, group " + std::to_string(group) +
                    " is not modelled; the native size assumes " + base + " everywhere");
    } else if (method == "bitsandbytes") {
      if (bool_at(*q, "load_in_4bit")) quant_name = "NF4";
      else if (bool_at(*q, "load_in_8bit")) quant_name = "INT8_ROWWISE";
      else cfg.warn("quantization_config bitsandbytes without load_in_4bit/8bit; the native size assumes " + base + " everywhere");
    }
    else cfg.warn("quantization_config method '" + method + "' is not modelled; the native size assumes " + base + " everywhere");
    if (!quant_name.empty()) {
      quantized = linear;
      if (mentions(skip, "self_attn") || mentions(skip, "attn")) quantized.erase(ParamClass::Attention);
      if (mentions(skip, "shared_expert")) quantized.erase(ParamClass::SharedExperts);
      if (mentions(skip, "mlp.") || mentions(skip, "mlp\\.")) quantized.erase(ParamClass::DenseMlp);
      if (method == "mxfp4") quantized = {ParamClass::RoutedExperts};  // gpt-oss: experts only
      // GPTQ may quantize the output head too ("lm_head": true); embeddings always stay 16-bit.
      if (bool_at(*q, "lm_head") && !mentions(skip, "lm_head")) quantized.insert(ParamClass::OutputHead);
    }
  }

  uint64_t bytes = 0;
  uint64_t quantized_params = 0;
  const QuantFormat* qfmt = quant_name.empty() ? nullptr : table.find_type(quant_name);
  m.native.bytes_by_class.clear();
  for (const auto& [cls, n] : m.params.by_class) {
    bool is_q = qfmt && quantized.count(cls);
    // The MTP layers' own embedding and head copies stay 16-bit like the model's (DeepSeek-V3's
    // FP8 checkpoint keeps model.layers.61.embed_tokens and shared_head.head in BF16).
    const uint64_t copies = cls == ParamClass::Mtp && is_q ? std::min(m.params.mtp_copies, n) : 0;
    const uint64_t class_bytes = is_q ? checked_add(qfmt->bits.bytes_for(n - copies), base_fmt->bits.bytes_for(copies)) : base_fmt->bits.bytes_for(n);
    m.native.bytes_by_class[cls] = class_bytes;
    bytes = checked_add(bytes, class_bytes);
    if (is_q) quantized_params += n - copies;
  }
  m.native.format = qfmt ? qfmt->name : base;
  m.native.bytes = bytes;
  m.native.measured = false;
  m.native.source = cfg.label() + " dtype and quantization_config, times the parameter count by class";
  if (qfmt) {
    std::string classes;
    for (auto c : quantized) classes += (classes.empty() ? "" : ", ") + std::string(to_string(c));
    m.native.note = fmt::format("{} ({} bits) on {} ({} params); {} elsewhere", qfmt->name, qfmt->bits_text(), classes,
                                format_params(quantized_params), base);
  } else {
    m.native.note = base + " throughout";
  }
}

void apply_tied_head_copy(ConfigView& cfg) {
  const auto& fact = cfg.stored().tied_head_copy;
  if (!fact || !fact->value) return;
  Model& m = cfg.model();
  if (!m.tied_embeddings) {
    cfg.fail("tie_word_embeddings", "is false, yet the checkpoint is said to store a tied head's copy; only a tied head has a copy (drop stored_tensors.tied_head_copy)");
  }
  m.params.stored_copies = checked_mul(m.vocab, m.hidden);
  const auto it = m.native.bytes_by_class.find(ParamClass::Embedding);
  m.native.copy_bytes = it != m.native.bytes_by_class.end() ? it->second : checked_mul(m.params.stored_copies, 2);
  m.provenance["params.stored_copies"] = fmt::format("lm_head.weight, a copy of the tied embedding ({} x {}): in the download, loaded once; {}",
                                                    m.vocab, m.hidden, fact->source);
}

}  // namespace vc
