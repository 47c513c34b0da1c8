#include "engines/llamacpp_placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <span>
#include <string_view>

#include "core/checked.h"
#include "core/error.h"
#include "engines/tensor_pattern.h"
#include "sources/tensor_classes.h"

namespace vc {
namespace {

constexpr uint64_t kMaxDevices = 64;

// CPU, or CUDA0 ... CUDA63 as llama.cpp names its buffers (no leading zero).
bool is_buffer_name(const std::string& b) {
  if (b == "CPU") return true;
  if (b.rfind("CUDA", 0) != 0 || b.size() == 4 || b.size() > 6 || (b.size() > 5 && b[4] == '0')) return false;
  if (!std::all_of(b.begin() + 4, b.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  return std::stoull(b.substr(4)) < kMaxDevices;
}

// Where a tensor belongs before any -ot: the input embedding, a repeating layer, or the output layer
// (output, output_norm and anything global).
enum class Home { Input, Layer, Output };

// One tensor to place: where it belongs (`what` holds its bytes, its layer and what CPU_REPACK
// needs); `name` is llama.cpp's (what -ot reads), empty for a synthesized tensor when no -ot
// pattern reads it.
using Emit = std::function<void(Home home, const std::string& name, const HostTensor& what)>;

void emit_tensor(const Model& m, std::size_t index, const Emit& emit) {
  const NamedTensor& t = m.tensors[index];
  if (t.name.rfind("token_embd.", 0) == 0) return emit(Home::Input, t.name, {t.bytes, std::nullopt, index, ""});
  auto il = tensor_layer_index(t.name);
  if (t.name.rfind("blk.", 0) == 0 && il && *il < m.layers.size()) return emit(Home::Layer, t.name, {t.bytes, *il, index, ""});
  emit(Home::Output, t.name, {t.bytes, std::nullopt, index, ""});
}

// A catalogue model has no tensor names: make llama.cpp's, each layer's class at its own
// parameters (LayerConfig::params) times the tier's bytes per parameter. Names are spelled out only
// when `named` (an -ot pattern reads them); placement needs only where each tensor belongs.
void synthesize(const Model& m, uint64_t weight_bytes, bool named, const Emit& emit) {
  uint64_t total = 0;
  for (const auto& [c, n] : m.params.by_class) total = checked_add(total, n);
  if (total == 0) throw InputError("MODEL", "has no parameter counts to place");
  auto bytes_for = [&](uint64_t params) { return mul_div_round(weight_bytes, params, total); };
  auto class_params = [&](ParamClass c) { auto it = m.params.by_class.find(c); return it == m.params.by_class.end() ? uint64_t{0} : it->second; };
  const std::string none;
  auto made_up = [](uint64_t bytes, std::optional<uint64_t> layer, const char* part) { return HostTensor{bytes, layer, std::nullopt, part}; };
  emit(Home::Input, named ? "token_embd.weight" : none, made_up(bytes_for(class_params(ParamClass::Embedding)), std::nullopt, "token_embd.weight"));
  emit(Home::Output, named ? "output.weight" : none, made_up(bytes_for(class_params(ParamClass::OutputHead)), std::nullopt, "output.weight"));
  uint64_t layer_params = 0;
  const bool per_layer = std::any_of(m.layers.begin(), m.layers.end(), [](const LayerConfig& l) { return !l.params.empty(); });
  std::map<ParamClass, uint64_t> even;  // a hand-built model without per-layer counts: classes spread evenly
  if (!per_layer) {
    for (const auto& [c, n] : m.params.by_class) {
      if (c != ParamClass::Embedding && c != ParamClass::OutputHead && c != ParamClass::Vision && c != ParamClass::Mtp) even[c] = n / m.layers.size();
    }
  }
  for (std::size_t il = 0; il < m.layers.size(); ++il) {
    const std::string b = named ? fmt::format("blk.{}.", il) : "";
    for (const auto& [c, n] : per_layer ? m.layers[il].params : even) {
      const auto names = llamacpp_tensor_names(c);
      const uint64_t bytes = bytes_for(n);
      for (const char* name : names) emit(Home::Layer, named ? b + name : none, made_up(bytes / names.size(), il, name));
      layer_params = checked_add(layer_params, n);
    }
  }
  // What no layer holds (the final norm, multi-token prediction) sits with the output layer.
  const uint64_t placed = checked_add(layer_params, checked_add(class_params(ParamClass::Embedding), class_params(ParamClass::OutputHead)));
  const uint64_t vision = class_params(ParamClass::Vision);  // a separate mmproj file in llama.cpp
  if (total > checked_add(placed, vision)) {
    emit(Home::Output, named ? "output_norm.weight" : none, made_up(bytes_for(total - placed - vision), std::nullopt, "output_norm.weight"));
  }
}

// A buffer as an index: 0 is CPU, 1 + k is CUDAk.
std::size_t buffer_index(const std::string& buffer) {
  if (!is_buffer_name(buffer)) throw InputError("-ot", "buffer '" + buffer + "' is not known; accepted: CPU, CUDA0, CUDA1, ... CUDA63");
  return buffer == "CPU" ? 0 : 1 + std::stoull(buffer.substr(4));
}
std::string buffer_name(std::size_t index) { return index == 0 ? "CPU" : fmt::format("CUDA{}", index - 1); }

}  // namespace

// llama.cpp's tensor names for a per-layer parameter class (the name decides where -ot moves it).
std::span<const char* const> llamacpp_tensor_names(ParamClass c) {
  static constexpr const char* kAttention[] = {"attn.weight"};
  static constexpr const char* kDense[] = {"ffn_up.weight"};
  static constexpr const char* kExperts[] = {"ffn_up_exps.weight", "ffn_gate_exps.weight", "ffn_down_exps.weight"};
  static constexpr const char* kShared[] = {"ffn_up_shexp.weight"};
  static constexpr const char* kRouter[] = {"ffn_gate_inp.weight"};
  static constexpr const char* kNorms[] = {"attn_norm.weight"};
  static constexpr const char* kOther[] = {"other.weight"};
  switch (c) {
    case ParamClass::Attention: return kAttention;
    case ParamClass::DenseMlp: return kDense;
    case ParamClass::RoutedExperts: return kExperts;
    case ParamClass::SharedExperts: return kShared;
    case ParamClass::Router: return kRouter;
    case ParamClass::Norms: return kNorms;
    default: return kOther;
  }
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

void add_n_cpu_moe(LlamaCppPlacementSettings& s, uint64_t layers) {
  if (layers > 4096) throw InputError("--n-cpu-moe", "must be at most 4096 layers");
  if (s.overrides.empty() && s.cpu_moe_layers == 0) {
    s.cpu_moe_layers = layers;
    return;
  }
  for (auto& o : cpu_moe_overrides(layers)) s.overrides.push_back(std::move(o));
}

bool moved_by_n_cpu_moe(const LlamaCppPlacementSettings& s, std::optional<uint64_t> layer, std::string_view id) {
  // The tensors --n-cpu-moe's overrides match (cpu_moe_overrides): blk.N.ffn_{up,down,gate}_exps.
  return layer && *layer < s.cpu_moe_layers &&
         (id.find("ffn_up_exps") != id.npos || id.find("ffn_gate_exps") != id.npos || id.find("ffn_down_exps") != id.npos);
}

namespace {
bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return s.substr(0, p.size()) == p; });
}
}  // namespace

std::optional<std::string> fit_overflow_buffer(const LlamaCppPlacementSettings& s, std::optional<uint64_t> layer, std::string_view id) {
  if (!layer || s.fit_overflow.empty()) return std::nullopt;
  // fit.cpp's patterns are "blk\.N\.ffn_...": what follows the layer's prefix decides.
  if (id.substr(0, 4) == "blk.") {
    const auto dot = id.find('.', 4);
    id = dot == id.npos ? std::string_view{} : id.substr(dot + 1);
  }
  for (const LlamaCppLayerOverflow& o : s.fit_overflow) {
    if (o.layer != *layer) continue;
    bool moves = false;
    switch (o.fraction) {
      case LlamaCppLayerFraction::Attention: moves = starts_with_any(id, {"ffn_gate", "ffn_up", "ffn_down"}); break;
      case LlamaCppLayerFraction::Up: moves = starts_with_any(id, {"ffn_gate", "ffn_down"}); break;
      case LlamaCppLayerFraction::Gate: moves = starts_with_any(id, {"ffn_down"}); break;
      case LlamaCppLayerFraction::Moe:
        moves = starts_with_any(id, {"ffn_up_exps", "ffn_up_chexps", "ffn_down_exps", "ffn_down_chexps", "ffn_gate_exps", "ffn_gate_chexps",
                                     "ffn_gate_up_exps", "ffn_gate_up_chexps"});
        break;
    }
    return moves ? std::optional<std::string>(buffer_name(o.buffer)) : std::nullopt;  // one override per layer
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> parse_overrides(const std::string& value, const std::string& flag) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    std::string item = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError(flag, "'" + item + "' is not REGEX=BUFFER (e.g. exps=CPU or blk\\.[0-9]\\.=CUDA1)");
    }
    std::string buft = item.substr(eq + 1);
    if (!is_buffer_name(buft)) throw InputError(flag, "buffer '" + buft + "' is not known; accepted: CPU, CUDA0, CUDA1, ... CUDA63");
    TensorPattern(item.substr(0, eq), flag);  // refused here, naming the flag, when it cannot be matched
    out.emplace_back(item.substr(0, eq), buft);
    if (out.size() > 256) throw InputError(flag, "more than 256 overrides");
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
  // Buffer indices (0 CPU, 1 + k CUDAk), named once: the loops below compare numbers, not names.
  auto device_of = [&](uint64_t il) -> std::size_t {
    if (il < gpu_start || ngl == 0) return 0;
    const double f = static_cast<double>(il - gpu_start) / static_cast<double>(ngl);
    const auto dev = static_cast<uint64_t>(std::upper_bound(splits.begin(), splits.end(), f) - splits.begin());
    return 1 + std::min<uint64_t>(dev, s.devices - 1);
  };
  std::vector<std::string> names;
  for (std::size_t i = 0; i <= s.devices; ++i) names.push_back(buffer_name(i));
  std::vector<std::size_t> layer_buffer(n_layer);
  for (uint64_t il = 0; il < n_layer; ++il) {
    layer_buffer[il] = device_of(il);
    p.layer_device.push_back(names[layer_buffer[il]]);
  }
  const std::size_t output_buffer = device_of(n_layer);
  p.output_device = names[output_buffer];

  std::vector<std::pair<TensorPattern, std::size_t>> res;
  for (const auto& [re, buft] : s.overrides) res.emplace_back(TensorPattern(re, "-ot"), buffer_index(buft));
  // Bytes per buffer; `used` marks a buffer that received a tensor (of any size, zero included).
  std::vector<uint64_t> bytes(names.size(), 0);
  std::vector<bool> used(names.size(), false);
  auto place = [&](const std::string& name, const HostTensor& what, std::size_t buffer) {
    if (moved_by_n_cpu_moe(s, what.layer, *what.part ? std::string_view(what.part) : std::string_view(name))) {
      buffer = 0;  // the count came before any -ot (add_n_cpu_moe): its match is the first
      ++p.overridden_tensors;
    } else if (auto fit = fit_overflow_buffer(s, what.layer, *what.part ? std::string_view(what.part) : std::string_view(name))) {
      buffer = buffer_index(*fit);  // --fit's overrides: the user set none (it does not run otherwise)
      ++p.overridden_tensors;
    } else {
      for (const auto& [re, target] : res) {
        if (re.found_in(name)) {
          buffer = target;
          ++p.overridden_tensors;
          break;
        }
      }
    }
    if (buffer >= bytes.size()) bytes.resize(buffer + 1, 0), used.resize(buffer + 1, false);
    bytes[buffer] = checked_add(bytes[buffer], what.bytes);
    used[buffer] = true;
    if (buffer == 0) p.host_tensors.push_back(what);
  };
  p.synthesized = model.tensors.empty();
  const bool tied = !p.synthesized && std::none_of(model.tensors.begin(), model.tensors.end(), [](const NamedTensor& t) { return t.name == "output.weight"; });
  const Emit to_buffer = [&](Home home, const std::string& name, const HostTensor& what) {
    switch (home) {
      case Home::Input:
        place(name, what, 0);  // the input layer stays on the host
        // Tied embeddings: the output layer loads a duplicate of token_embd on its own device.
        if (tied && name == "token_embd.weight" && output_buffer != 0) {
          HostTensor copy = what;
          copy.part = "output.weight";
          place("output.weight", copy, output_buffer);
        }
        break;
      case Home::Layer: place(name, what, layer_buffer[*what.layer]); break;
      case Home::Output: place(name, what, output_buffer); break;
    }
  };
  if (p.synthesized) synthesize(model, weight_bytes, !res.empty(), to_buffer);
  else for (std::size_t i = 0; i < model.tensors.size(); ++i) emit_tensor(model, i, to_buffer);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (used[i]) p.weights_by_buffer[buffer_name(i)] = bytes[i];
  }
  return p;
}

}  // namespace vc
