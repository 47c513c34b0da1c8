#include "sources/safetensors/safetensors_model.h"

#include <fmt/format.h>

#include <set>

#include "core/checked.h"
#include "core/units.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_omni.h"
#include "sources/tensor_classes.h"

namespace vc {
namespace {

bool ends(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

uint64_t safetensors_tensor_params(const SafetensorsTensor& t, bool has_scale_sibling) {
  const std::string& n = t.name;
  // Quantization side data: compressed-tensors / FP8 / NVFP4 scales, GPTQ/AWQ zeros and group
  // indices, bitsandbytes absmax and quant maps.
  for (const char* aux : {"_scale", "_scale_inv", "_scales", "_scale_2", "weight_shape", "zero_point", "global_scale", "input_scale",
                          ".scales", ".qzeros", ".g_idx", ".absmax", ".quant_map", "bitsandbytes__nf4", "bitsandbytes__fp4"}) {
    if (ends(n, aux)) return 0;
  }
  if ((ends(n, "weight_packed") || ends(n, ".qweight")) && (t.dtype == "I32" || t.dtype == "U32")) {
    return checked_mul(t.elements, 8);  // int4, 8 per 32-bit word
  }
  if (ends(n, "_blocks") && t.dtype == "U8") return checked_mul(t.elements, 2);                               // MXFP4 nibbles
  if (t.dtype == "U8" && ends(n, ".weight") && has_scale_sibling) return checked_mul(t.elements, 2);          // NVFP4 nibbles
  return t.elements;
}

namespace {

// A module buffer saved with the weights, not a parameter: GPT-2's causal mask h.N.attn.bias
// ([1, 1, n_positions, n_positions]) and masked_bias (a scalar), GPT-NeoX's attention.bias and
// attention.masked_bias, and rotary inv_freq. vLLM skips them on load (models/gpt2.py load_weights:
// ".attn.bias" and ".attn.masked_bias"; rotary_emb.inv_freq in its other loaders). A real bias is one
// dimension, so only a 4-dimensional ...attn.bias / ...attention.bias is a mask.
bool is_non_parameter_buffer(const SafetensorsTensor& t) {
  const std::string& n = t.name;
  if (ends(n, "rotary_emb.inv_freq") || ends(n, ".masked_bias")) return true;
  return (ends(n, ".attn.bias") || ends(n, ".attention.bias")) && t.shape.size() == 4;
}

}  // namespace

TensorTally tally_safetensors(const std::vector<SafetensorsFile>& files, uint64_t decoder_layers) {
  std::set<std::string> names;
  for (const auto& f : files) for (const auto& t : f.tensors) names.insert(t.name);
  TensorTally tally;
  for (const auto& f : files) {
    for (const auto& t : f.tensors) {
      // U8 weights with a scale or bitsandbytes state beside them are packed 4-bit (2 per byte).
      const bool scaled = names.count(t.name + "_scale") > 0 || names.count(t.name + ".absmax") > 0;
      if (is_non_parameter_buffer(t)) {
        ++tally.buffer_tensors;
        tally.buffer_bytes = checked_add(tally.buffer_bytes, t.bytes());
        continue;
      }
      ParamClass c = classify_hf_tensor(t.name);
      if (decoder_layers && c != ParamClass::Vision) {
        auto il = tensor_layer_index(t.name);
        if (il && *il >= decoder_layers) c = ParamClass::Mtp;
      }
      tally.add(c, t.dtype, safetensors_tensor_params(t, scaled), t.bytes());
    }
  }
  return tally;
}

namespace {

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Qwen2.5-Omni and Qwen3-Omni (config_omni.h, config_omni3.h): an engine loads the thinker, whose
// tensors are named "thinker." + the usual names (read here without the prefix); the speech-output
// parts' ("talker.", and Qwen2.5-Omni's "token2wav." or Qwen3-Omni's "code2wav.") are summed
// apart, into `speech`.
std::vector<SafetensorsFile> omni_thinker_files(const std::vector<SafetensorsFile>& files, TensorTally& speech) {
  std::vector<SafetensorsFile> out;
  for (const auto& f : files) {
    SafetensorsFile g = f;
    g.tensors.clear();
    for (const auto& t : f.tensors) {
      if (starts(t.name, "talker.") || starts(t.name, "token2wav.") || starts(t.name, "code2wav.")) {
        speech.add(ParamClass::Other, t.dtype, t.elements, t.bytes());
        continue;
      }
      g.tensors.push_back(t);
      if (starts(t.name, "thinker.")) g.tensors.back().name = t.name.substr(8);
    }
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

Model model_from_checkpoint(const nlohmann::json& config, const std::string& config_label, const std::vector<SafetensorsFile>& all_files) {
  Model m = model_from_config(config, config_label);
  TensorTally speech;
  const bool omni = is_qwen_omni(config);
  const std::vector<SafetensorsFile> thinker = omni ? omni_thinker_files(all_files, speech) : std::vector<SafetensorsFile>{};
  const std::vector<SafetensorsFile>& files = omni ? thinker : all_files;
  if (speech.tensors) {
    const std::string held = fmt::format("the files hold {} speech-output tensors (talker., token2wav., code2wav.): {} params, {} B ({}), not in the weights", speech.tensors,
                                         format_count(speech.params), format_count(speech.bytes), speech.dtype_summary());
    m.provenance["params.speech_tensors"] = held;
    m.left_out.push_back("speech output as stored: " + held);
  }
  uint64_t experts = 0, used = 0;
  for (const auto& l : m.layers) {
    if (l.feed_forward.kind == FeedForwardKind::MoE) {
      experts = l.feed_forward.experts;
      used = l.feed_forward.experts_per_token;
      break;
    }
  }
  TensorTally tally = tally_safetensors(files, m.layers.size());
  // A tied head saved again as lm_head.weight (Qwen3 0.6B/1.7B): in the download, but engines load
  // the embedding once (vLLM skips lm_head.* when tie_word_embeddings), so it is a stored copy.
  if (m.tied_embeddings && tally.params_by_class.count(ParamClass::OutputHead)) {
    const auto [copy_params, copy_bytes] = tally.take(ParamClass::OutputHead);
    m.params.stored_copies = copy_params;
    m.native.copy_bytes = copy_bytes;
    m.provenance["params.stored_copies"] = "lm_head.weight in the files beside tie_word_embeddings true: a copy of the embedding, loaded once";
  }
  if (tally.buffer_tensors)
    m.provenance["params.buffers"] = fmt::format("the files also hold {} non-parameter buffers (causal masks, rotary inv_freq), {} B, which engines "
                                                 "skip on load: not counted", tally.buffer_tensors, tally.buffer_bytes);
  const std::string what = files.size() == 1 ? files.front().label : fmt::format("{} and {} more shards", files.front().label, files.size() - 1);
  // The config's stated figures stay beside; the derived ones now come from the real tensors.
  tally.write_params(m.params, experts, used, "safetensors headers (" + what + ")");
  m.native.bytes = tally.bytes;
  m.native.measured = true;
  m.native.bytes_by_class = tally.bytes_by_class;
  m.native.source = fmt::format("sum of the {} tensors' exact bytes in {}", tally.tensors, what);
  m.native.note = "safetensors " + tally.dtype_summary();
  for (const auto& f : files) m.sources.push_back(f.label);
  return m;
}

}  // namespace vc
