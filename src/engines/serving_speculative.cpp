#include "engines/serving_speculative.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/serving_dtype.h"
#include "estimate/estimate.h"

namespace vc {
namespace {

constexpr const char* kVllmMethods = "draft_model, eagle, eagle3, mtp (and the per-model *_mtp names such as deepseek_mtp), ngram";

uint64_t whole_number(const nlohmann::json& j, const char* key, const std::string& flag, uint64_t lo, uint64_t hi) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_unsigned() || v.get<uint64_t>() < lo || v.get<uint64_t>() > hi)
    throw InputError(flag, fmt::format("{} must be a whole number from {} to {} (got {})", key, lo, hi, v.dump()));
  return v.get<uint64_t>();
}

// vLLM picks the method from the draft's name when "method" is absent (SpeculativeConfig.__post_init__:
// "eagle3" / "eagle-" in the name, else a draft model).
std::string method_from_model_name(const std::string& model) {
  std::string lower;
  for (char c : model) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("eagle3") != std::string::npos) return "eagle3";
  if (lower.find("eagle-") != std::string::npos) return "eagle";
  return "draft_model";
}

uint64_t class_params(const Model& m, ParamClass c) {
  auto it = m.params.by_class.find(c);
  return it == m.params.by_class.end() ? 0 : it->second;
}

// The layer whose attention an MTP layer repeats: the model's last layer with a per-token cache.
const LayerConfig* last_cache_layer(const Model& m) {
  for (auto it = m.layers.rbegin(); it != m.layers.rend(); ++it) {
    if (it->attention.grows_with_context()) return &*it;
  }
  return nullptr;
}

}  // namespace

ServingSpeculative parse_vllm_speculative_config(const std::string& text, const std::string& flag) {
  const std::string example = R"(e.g. '{"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 5}' or '{"method": "mtp", "num_speculative_tokens": 1}')";
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw InputError(flag, "is not JSON; accepted: vLLM's --speculative-config object, " + example);
  }
  if (!j.is_object()) throw InputError(flag, "must be a JSON object, " + example);
  ServingSpeculative s;
  s.source_flag = flag;
  if (j.contains("model")) {
    if (!j.at("model").is_string() || j.at("model").get<std::string>().empty()) throw InputError(flag, "\"model\" must be the draft model's name or path");
    s.draft = j.at("model").get<std::string>();
  }
  std::string method = j.contains("method") ? (j.at("method").is_string() ? j.at("method").get<std::string>() : std::string("?")) : "";
  if (method.empty()) {
    if (s.draft.empty()) throw InputError(flag, "needs \"method\" or a draft \"model\"; accepted methods: " + std::string(kVllmMethods));
    method = method_from_model_name(s.draft);
  }
  if (method == "mtp" || (method.size() > 4 && method.ends_with("_mtp"))) s.method = "mtp";
  else if (method == "draft_model" || method == "eagle" || method == "eagle3" || method == "ngram") s.method = method;
  else if (method == "medusa" || method == "mlp_speculator" || method == "suffix")
    throw InputError(flag, "method '" + method + "' is not modelled; accepted: " + kVllmMethods);
  else throw InputError(flag, "method '" + method + "' is not a vLLM speculative method; accepted: " + kVllmMethods);
  if (s.needs_draft() && s.draft.empty()) throw InputError(flag, "method " + s.method + " needs the draft's \"model\" (a model name or path)");
  if ((s.method == "mtp" || s.method == "ngram") && !s.draft.empty())
    throw InputError(flag, "method " + s.method + " takes no draft \"model\" (mtp uses the model's own MTP layers)");
  if (j.contains("num_speculative_tokens")) s.num_speculative_tokens = whole_number(j, "num_speculative_tokens", flag, 1, 64);
  else if (s.method != "mtp") throw InputError(flag, "needs \"num_speculative_tokens\" (tokens drafted per step, 1 to 64), as vLLM does");
  if (j.contains("draft_tensor_parallel_size")) s.draft_tensor_parallel_size = whole_number(j, "draft_tensor_parallel_size", flag, 1, 1024);
  return s;
}

std::string sglang_speculative_method(const std::string& a) {
  if (a == "EAGLE") return "eagle";
  if (a == "EAGLE3") return "eagle3";
  if (a == "NEXTN") return "mtp";
  if (a == "STANDALONE") return "draft_model";
  if (a == "NGRAM") return "ngram";
  throw InputError("--speculative-algorithm", "'" + a + "' is not modelled; accepted: EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM");
}

std::string sglang_algorithm_name(const std::string& method) {
  if (method == "eagle") return "EAGLE";
  if (method == "eagle3") return "EAGLE3";
  if (method == "mtp") return "NEXTN";
  if (method == "draft_model") return "STANDALONE";
  return "NGRAM";
}

SglangSpecShape sglang_spec_shape(const ServingSpeculative& s, const Model& target) {
  SglangSpecShape shape;
  if (!s.steps) {
    // server_args.py asserts that top-k and draft tokens come with the steps.
    if (s.topk || s.draft_tokens)
      throw InputError("--speculative-num-steps", "is needed with --speculative-eagle-topk or --speculative-num-draft-tokens (SGLang chooses all three or none)");
    const bool deepseek = target.architecture == "deepseek_v3" || target.architecture == "deepseek_v2";
    shape = deepseek ? SglangSpecShape{3, 1, 4} : SglangSpecShape{5, 4, 8};
  } else {
    shape.steps = *s.steps;
    shape.topk = s.topk.value_or(1);
    shape.draft_tokens = s.draft_tokens.value_or(shape.steps + 1);
  }
  if (shape.topk == 1) shape.draft_tokens = shape.steps + 1;  // server_args.py adjusts it so
  return shape;
}

uint64_t mtp_layer_count(const Model& m) {
  const uint64_t mtp = class_params(m, ParamClass::Mtp);
  if (mtp == 0) return 0;
  const LayerConfig* layer = last_cache_layer(m);
  const uint64_t one = layer ? checked_add(layer->param_count(), checked_product({2, m.hidden, m.hidden})) : 0;
  const uint64_t own = mtp > m.params.mtp_copies ? mtp - m.params.mtp_copies : mtp;
  if (one == 0) return 1;
  return std::max<uint64_t>(1, (own + one / 2) / one);
}

uint64_t mtp_weight_bytes(const Model& m, uint64_t whole_bytes, bool own_only) {
  const uint64_t params = class_params(m, ParamClass::Mtp);
  if (params == 0) return 0;
  const auto it = m.native.bytes_by_class.find(ParamClass::Mtp);
  uint64_t stored = it == m.native.bytes_by_class.end() ? 0 : it->second;
  uint64_t own = params;
  if (own_only) {
    own -= std::min(own, m.params.mtp_copies);
    stored -= std::min(stored, checked_mul(m.params.mtp_copies, 2));
  }
  return loaded_share_bytes(m, whole_bytes, stored, own);
}

Drafter serving_drafter(const Model& target, const Model* draft, const ServingSpeculative& s, const std::string& dtype) {
  Drafter d;
  if (s.method == "ngram") {
    d.name = "n-gram lookup (no draft model)";
    d.weight_formula = "nothing loaded";
    d.layers_formula = "no drafter layers";
    return d;
  }
  if (s.method == "mtp") {
    const uint64_t n = mtp_layer_count(target);
    const LayerConfig* layer = last_cache_layer(target);
    if (n == 0 || !layer)
      throw InputError(s.source_flag.empty() ? "--speculative-config" : s.source_flag,
                       "method mtp (SGLang NEXTN) uses the model's own MTP layers, and " + target.name +
                           " has none in its config.json (num_nextn_predict_layers / mtp_num_hidden_layers); use a draft model or EAGLE head");
    d.name = "MTP layers of " + target.name;
    // The target does not build the MTP layers (mtp_weight_bytes); the drafter loads them from the
    // checkpoint at its own format, sharing the target's embedding and head.
    d.weight_bytes = mtp_weight_bytes(target, loaded_weight_bytes(target, target.native.bytes, dtype), true);
    d.weight_formula = fmt::format("{} MTP params{}, loaded from the checkpoint ({} B; the target leaves them out)",
                                   format_params(class_params(target, ParamClass::Mtp) - std::min(class_params(target, ParamClass::Mtp), target.params.mtp_copies)),
                                   target.params.mtp_copies ? " less the embedding and head copies the drafter shares with the target" : "",
                                   format_count(d.weight_bytes));
    d.layers.assign(n, *layer);
    d.layers_formula = fmt::format("{} MTP layer(s) with the attention of the model's last layer", n);
    return d;
  }
  if (!draft) throw InputError(s.source_flag.empty() ? "--draft" : s.source_flag, "method " + s.method + " needs a draft model");
  const uint64_t value = serving_dtype_bytes(dtype);
  uint64_t bytes = loaded_weight_bytes(*draft, resolve_weights(*draft, "").bytes, dtype);
  d.name = (s.method == "draft_model" ? "draft model " : "EAGLE head ") + draft->name;
  d.weight_formula = fmt::format("{} checkpoint at --dtype {}", draft->name, dtype);
  if (s.method != "draft_model") {
    // An EAGLE head reads the target's embedding: the engines share it rather than load a copy
    // (vllm/v1/spec_decode/eagle.py load_model; SGLang eagle_worker.py _share_embed_head).
    const uint64_t embed = std::min(bytes, checked_mul(class_params(*draft, ParamClass::Embedding), value));
    bytes -= embed;
    d.weight_formula += fmt::format(" - its {} B input embedding (shared with the target)", format_count(embed));
  }
  d.weight_bytes = bytes;
  for (const auto& l : draft->layers) {
    if (l.attention.kind != AttentionKind::None || l.parallel_mixer) d.layers.push_back(l);
  }
  d.layers_formula = fmt::format("the draft's {} attention layer(s)", d.layers.size());
  return d;
}

}  // namespace vc
