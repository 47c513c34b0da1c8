#include "engines/llamacpp_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "core/checked.h"
#include "core/error.h"
#include "sources/tensor_classes.h"

namespace vc {
namespace {

constexpr uint64_t kMaxDevices = 64;

bool is_buffer_name(const std::string& b) {
  if (b == "CPU") return true;
  if (b.rfind("CUDA", 0) != 0 || b.size() == 4) return false;
  return std::all_of(b.begin() + 4, b.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

// llama.cpp's tensor name for a per-layer parameter class (the name decides where -ot moves it).
std::vector<const char*> llamacpp_tensor_names(ParamClass c) {
  switch (c) {
    case ParamClass::Attention: return {"attn.weight"};
    case ParamClass::DenseMlp: return {"ffn_up.weight"};
    case ParamClass::RoutedExperts: return {"ffn_up_exps.weight", "ffn_gate_exps.weight", "ffn_down_exps.weight"};
    case ParamClass::SharedExperts: return {"ffn_up_shexp.weight"};
    case ParamClass::Router: return {"ffn_gate_inp.weight"};
    case ParamClass::Norms: return {"attn_norm.weight"};
    default: return {"other.weight"};
  }
}

CompiledOverrides compile_overrides(const std::vector<std::pair<std::string, std::string>>& overrides) {
  CompiledOverrides out;
  for (const auto& [re, buft] : overrides) out.emplace_back(std::regex(re), buft);
  return out;
}

const std::string& override_buffer(const std::string& name, const CompiledOverrides& overrides, const std::string& fallback) {
  for (const auto& [re, buft] : overrides) {
    if (std::regex_search(name, re)) return buft;
  }
  return fallback;
}

std::vector<std::pair<std::string, std::string>> cpu_moe_overrides(std::optional<uint64_t> layers) {
  // common/arg.cpp: --cpu-moe adds "\.ffn_(up|down|gate)_exps" = CPU; --n-cpu-moe N adds
  // "blk\.%d\.ffn_(up|down|gate)_exps" = CPU for each of the first N layers.
  if (!layers) return {{"\\.ffn_(up|down|gate)_exps", "CPU"}};
  if (*layers > 4096) throw InputError("--n-cpu-moe", "must be at most 4096 layers");
  std::vector<std::pair<std::string, std::string>> out;
  for (uint64_t i = 0; i < *layers; ++i) out.emplace_back(fmt::format("blk\\.{}\\.ffn_(up|down|gate)_exps", i), "CPU");
  return out;
}

namespace {

// A catalogue model has no tensor names: make llama.cpp's, each layer's class at its own
// parameters (LayerConfig::params) times the tier's bytes per parameter.
std::vector<NamedTensor> synthesize(const Model& m, uint64_t weight_bytes) {
  uint64_t total = 0;
  for (const auto& [c, n] : m.params.by_class) total = checked_add(total, n);
  if (total == 0) throw InputError("MODEL", "has no parameter counts to place");
  auto bytes_for = [&](uint64_t params) { return mul_div_round(weight_bytes, params, total); };
  auto class_params = [&](ParamClass c) { auto it = m.params.by_class.find(c); return it == m.params.by_class.end() ? uint64_t{0} : it->second; };
  std::vector<NamedTensor> t;
  t.push_back({"token_embd.weight", bytes_for(class_params(ParamClass::Embedding))});
  t.push_back({"output.weight", bytes_for(class_params(ParamClass::OutputHead))});
  uint64_t layer_params = 0;
  const bool per_layer = std::any_of(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return !l.params.empty(); });
  for (std::size_t il = 0; il < m.layers.size(); ++il) {
    const std::string b = fmt::format("blk.{}.", il);
    std::map<ParamClass, uint64_t> even;  // a hand-built model without per-layer counts: classes spread evenly
    if (!per_layer) {
      for (const auto& [c, n] : m.params.by_class) {
        if (c != ParamClass::Embedding && c != ParamClass::OutputHead && c != ParamClass::Vision && c != ParamClass::Mtp) even[c] = n / m.layers.size();
      }
    }
    for (const auto& [c, n] : per_layer ? m.layers[il].params : even) {
      const auto names = llamacpp_tensor_names(c);
      const uint64_t bytes = bytes_for(n);
      for (const char* name : names) t.push_back({b + name, bytes / names.size()});
      layer_params = checked_add(layer_params, n);
    }
  }
  // What no layer holds (the final norm, multi-token prediction) sits with the output layer.
  const uint64_t placed = checked_add(layer_params, checked_add(class_params(ParamClass::Embedding), class_params(ParamClass::OutputHead)));
  const uint64_t vision = class_params(ParamClass::Vision);  // a separate mmproj file in llama.cpp
  if (total > checked_add(placed, vision)) t.push_back({"output_norm.weight", bytes_for(total - placed - vision)});
  return t;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_overrides(const std::string& value) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError("-ot", "'" + item + "' is not REGEX=BUFFER (e.g. exps=CPU or blk\\.[0-9]\\.=CUDA1)");
    }
    std::string buft = item.substr(eq + 1);
    if (!is_buffer_name(buft)) throw InputError("-ot", "buffer '" + buft + "' is not known; accepted: CPU, CUDA0, CUDA1, ...");
    try {
      std::regex check(item.substr(0, eq));
    } catch (const std::regex_error& e) {
      throw InputError("-ot", "'" + item.substr(0, eq) + "' is not a valid regular expression: " + e.what());
    }
    out.emplace_back(item.substr(0, eq), buft);
    if (out.size() > 256) throw InputError("-ot", "more than 256 overrides");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

LlamaCppPlacement llamacpp_placement(const Model& model, uint64_t weight_bytes, const LlamaCppPlacementSettings& s) {
  if (s.devices == 0 || s.devices > kMaxDevices) throw InputError("-ts", fmt::format("must name 1 to {} devices", kMaxDevices));
  if (!s.tensor_split.empty() && s.tensor_split.size() != s.devices) throw InputError("-ts", "needs one weight per device");
  LlamaCppPlacement p;
  const uint64_t n_layer = model.layers.size();
  // llama_model::load_tensors: i_gpu_start = max(n_layer + 1 - ngl, 0), act = min(ngl, n_layer + 1);
  // "layer" n_layer is the output layer, so it is the first to be offloaded.
  const uint64_t ngl = std::min(s.n_gpu_layers, n_layer + 1);
  const uint64_t gpu_start = n_layer + 1 - ngl;
  std::vector<double> splits(s.devices, 1.0);
  if (!s.tensor_split.empty()) splits = s.tensor_split;
  double sum = 0;
  for (double w : splits) {
    if (!(w >= 0) || w > 1e9) throw InputError("-ts", "weights must be non-negative numbers");
    sum += w;
  }
  if (sum <= 0) throw InputError("-ts", "at least one weight must be positive");
  double acc = 0;
  for (double& w : splits) w = (acc += w) / sum;  // cumulative fractions
  auto device_of = [&](uint64_t il) -> std::string {
    if (il < gpu_start || ngl == 0) return "CPU";
    const double f = static_cast<double>(il - gpu_start) / static_cast<double>(ngl);
    const auto dev = static_cast<uint64_t>(std::upper_bound(splits.begin(), splits.end(), f) - splits.begin());
    return fmt::format("CUDA{}", std::min<uint64_t>(dev, s.devices - 1));
  };
  for (uint64_t il = 0; il < n_layer; ++il) p.layer_device.push_back(device_of(il));
  p.output_device = device_of(n_layer);

  std::vector<NamedTensor> synthesized;
  const std::vector<NamedTensor>* tensors = &model.tensors;
  if (model.tensors.empty()) {
    synthesized = synthesize(model, weight_bytes);
    tensors = &synthesized;
    p.synthesized = true;
  }
  const CompiledOverrides res = compile_overrides(s.overrides);
  const bool tied = std::none_of(tensors->begin(), tensors->end(), [](const NamedTensor& t) { return t.name == "output.weight"; });
  auto place = [&](const std::string& name, uint64_t bytes, const std::string& dev) {
    const std::string& buffer = override_buffer(name, res, dev);
    if (&buffer != &dev) ++p.overridden_tensors;
    p.weights_by_buffer[buffer] = checked_add(p.weights_by_buffer[buffer], bytes);
  };
  for (const auto& t : *tensors) {
    if (t.name.rfind("token_embd.", 0) == 0) {
      place(t.name, t.bytes, "CPU");  // the input layer stays on the host
      // Tied embeddings: the output layer loads a duplicate of token_embd on its own device.
      if (tied && t.name == "token_embd.weight" && p.output_device != "CPU") place("output.weight", t.bytes, p.output_device);
      continue;
    }
    auto il = tensor_layer_index(t.name);
    if (t.name.rfind("blk.", 0) == 0 && il && *il < n_layer) place(t.name, t.bytes, p.layer_device[*il]);
    else place(t.name, t.bytes, p.output_device);  // output, output_norm and anything global
  }
  return p;
}

}  // namespace vc
