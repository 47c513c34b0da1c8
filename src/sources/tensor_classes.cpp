#include "sources/tensor_classes.h"

#include <cctype>

namespace vc {
namespace {

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The name after "blk.N." (GGUF), or the whole name.
std::string without_block(const std::string& name) {
  if (!starts(name, "blk.")) return name;
  auto dot = name.find('.', 4);
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

}  // namespace

std::optional<uint64_t> tensor_layer_index(const std::string& name) {
  for (const char* marker : {"blk.", "layers.", "h.", "blocks."}) {
    size_t at = 0;
    while ((at = name.find(marker, at)) != std::string::npos) {
      if (at != 0 && name[at - 1] != '.') { at += 1; continue; }
      size_t i = at + std::char_traits<char>::length(marker);
      uint64_t n = 0;
      size_t digits = 0;
      while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && digits < 9) {
        n = n * 10 + static_cast<uint64_t>(name[i] - '0');
        ++i;
        ++digits;
      }
      if (digits > 0 && i < name.size() && name[i] == '.') return n;
      at += 1;
    }
  }
  return std::nullopt;
}

ParamClass classify_gguf_tensor(const std::string& full) {
  if (starts(full, "v.") || starts(full, "mm.") || starts(full, "a.")) return ParamClass::Vision;
  const std::string n = without_block(full);
  if (starts(n, "nextn.")) return ParamClass::Mtp;
  if (has(n, "norm")) return ParamClass::Norms;
  if (starts(n, "token_embd") || starts(n, "per_layer_token_embd")) return ParamClass::Embedding;
  if (starts(n, "output.")) return ParamClass::OutputHead;
  if (has(n, "_shexp")) return ParamClass::SharedExperts;  // includes ffn_gate_inp_shexp
  if (starts(n, "ffn_gate_inp") || starts(n, "exp_probs_b")) return ParamClass::Router;
  if (has(n, "_exps") || has(n, "_chexps")) return ParamClass::RoutedExperts;
  if (starts(n, "ffn_")) return ParamClass::DenseMlp;
  if (starts(n, "attn_") || starts(n, "ssm_") || starts(n, "time_mix") || starts(n, "indexer") || starts(n, "shortconv")) {
    return ParamClass::Attention;
  }
  return ParamClass::Other;
}

ParamClass classify_hf_tensor(const std::string& n) {
  if (has(n, "vision") || has(n, "visual") || has(n, "multi_modal_projector") || has(n, "mm_projector") || has(n, "image_newline") ||
      has(n, "audio_tower") || has(n, "vit.")) {
    return ParamClass::Vision;
  }
  if (has(n, "mtp") || has(n, "nextn")) return ParamClass::Mtp;
  // wpe: GPT-2 / GPT-BigCode's learned positions, a lookup as the token embedding is; embed_in and
  // embed_out: GPT-NeoX's embedding and untied head (modeling_gpt_neox.py).
  if (has(n, "embed_tokens") || has(n, "wte.") || has(n, "wpe.") || has(n, "word_embeddings") || has(n, "tok_embeddings") || has(n, "embed_in."))
    return ParamClass::Embedding;
  if (starts(n, "lm_head") || n == "output.weight" || starts(n, "embed_out.")) return ParamClass::OutputHead;
  if (has(n, "norm") || has(n, "ln_")) return ParamClass::Norms;
  if (has(n, "shared_expert")) return ParamClass::SharedExperts;
  if (has(n, ".experts.") || has(n, ".experts_")) return ParamClass::RoutedExperts;
  if (has(n, "mlp.gate.") || has(n, "router") || has(n, "block_sparse_moe.gate.") || has(n, "e_score_correction_bias")) return ParamClass::Router;
  if (has(n, "mlp") || has(n, "feed_forward") || has(n, "ffn")) return ParamClass::DenseMlp;
  if (has(n, "attn") || has(n, "attention") || has(n, "mixer") || has(n, "mamba")) return ParamClass::Attention;
  return ParamClass::Other;
}

}  // namespace vc
