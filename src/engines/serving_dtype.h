#pragma once
// --dtype as vLLM and SGLang read it (both take auto, half, float16, bfloat16, float, float32):
// auto runs a 32-bit checkpoint in 16-bit (vllm/config/model.py _get_and_verify_dtype; SGLang
// configs/model_config.py keeps the same rule), and what that makes of the checkpoint's bytes.
#include <cstdint>
#include <string>

#include "model/model.h"

namespace vc {

// Bytes of one weight or activation value at --dtype; InputError naming --dtype otherwise.
uint64_t serving_dtype_bytes(const std::string& dtype);

// The checkpoint as the engine loads it at --dtype: unquantized tensors (stored at exactly 16 or
// 32 bits a value) cast to --dtype, quantized tensors as stored. A tier other than the native
// checkpoint (`tier_bytes` differs from the native bytes) is taken as given.
uint64_t loaded_weight_bytes(const Model& model, uint64_t tier_bytes, const std::string& dtype);

// One parameter class of the native checkpoint as loaded, the rule loaded_weight_bytes applies per
// class: `params` stored in `stored_bytes` at exactly 16 or 32 bits a value are cast to
// `value_bytes` (serving_dtype_bytes); quantized ones stay as stored.
uint64_t loaded_class_bytes(uint64_t params, uint64_t stored_bytes, uint64_t value_bytes);

// Of a checkpoint loaded as `whole_bytes` (loaded_weight_bytes, or a tier's bytes): what `stored`
// bytes of the native checkpoint (a class's, or a part of one) take, scaled by whole_bytes / the
// native bytes; without them (`stored` 0), `params` parameters' share of the model's parameters.
uint64_t loaded_share_bytes(const Model& model, uint64_t whole_bytes, uint64_t stored, uint64_t params);

}  // namespace vc
