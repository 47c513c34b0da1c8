#pragma once
// ggml tensor types by the id GGUF stores (data/ggml_types.json), with their block layout from
// data/quant_formats.json.
#include <cstdint>
#include <string>

#include "model/quant.h"

namespace vc {

struct GgmlType {
  uint32_t id = 0;
  std::string name;            // "Q4_K", "MXFP4"
  const QuantFormat* format = nullptr;
};

// nullptr for an id this build does not know.
const GgmlType* find_ggml_type(uint32_t id);

// The llama.cpp recipe name of a GGUF general.file_type ("Q4_K_M"); empty when unknown.
std::string gguf_file_type_name(uint64_t id);

// Bytes of a tensor with dimensions ne (ggml order: ne[0] is the row): rows of ne[0] values in
// whole blocks. Throws InputError (subject `label`) when ne[0] is not a multiple of the block.
uint64_t ggml_tensor_bytes(const GgmlType& type, const uint64_t* ne, unsigned n_dims, const std::string& label);

}  // namespace vc
