#pragma once
// safetensors headers -> parameters by class and exact bytes; with a config.json, a Model whose
// geometry comes from the config mapper and whose native checkpoint is the real tensor bytes.
#include <nlohmann/json.hpp>
#include <vector>

#include "model/model.h"
#include "sources/safetensors/safetensors_file.h"
#include "sources/tensor_tally.h"

namespace vc {

// Parameters a tensor stores: elements, except packed layouts (int4 in I32 "weight_packed" /
// GPTQ-AWQ "qweight" = 8 per element; MXFP4 "_blocks", NVFP4 and bitsandbytes 4-bit U8 weights =
// 2 per byte) and quantization side data: scales, zero points, group indices, absmax, shapes
// (0: they are bytes, not parameters).
uint64_t safetensors_tensor_params(const SafetensorsTensor& t, bool has_scale_sibling);

// `decoder_layers` (0 when unknown): layers numbered at or past it are the MTP head.
TensorTally tally_safetensors(const std::vector<SafetensorsFile>& files, uint64_t decoder_layers);

// config.json geometry + the files' exact bytes and tensor-derived parameters.
Model model_from_checkpoint(const nlohmann::json& config, const std::string& config_label, const std::vector<SafetensorsFile>& files);

}  // namespace vc
