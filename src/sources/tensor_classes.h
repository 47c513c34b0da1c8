#pragma once
// Which part of the model a checkpoint tensor belongs to, from its name. GGUF names follow
// llama.cpp's tensor map (blk.N.attn_q.weight); Hugging Face names follow the transformers
// modelling files of the major families (model.layers.N.self_attn.q_proj.weight).
#include <cstdint>
#include <optional>
#include <string>

#include "model/model.h"

namespace vc {

// The N of "blk.N." / "model.layers.N." / "layers.N.", if the name has one.
std::optional<uint64_t> tensor_layer_index(const std::string& name);

ParamClass classify_gguf_tensor(const std::string& name);
ParamClass classify_hf_tensor(const std::string& name);

}  // namespace vc
