#pragma once
// Where llama-quantize stores a tensor at another type than the tier's (src/llama-quant.cpp,
// llama_tensor_get_type_impl and tensor_type_fallback), in the two cases that move a file's size
// by more than the measured mixes allow for:
// - Row fallback: a matrix is stored only in whole blocks per row; where its row width (ggml's
//   ne[0], the values one output reads) is not a multiple of the tier type's block (256 for the
//   K-quants and i-quants), it goes to a fallback type (IQ* -> IQ4_NL, Q2_K/Q3_K -> Q4_0,
//   Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0). Hidden sizes such as gpt-oss's 2,880 or Gemma 3 1B's
//   1,152 make a "Q2_K" file far larger than Q2_K's bits say.
// - The output layer (and a tied embedding, which is quantized as the output layer): Q8_0 when the
//   hidden size is not whole 256-value blocks; Q5_K at the 1- and 2-bit i-quant tiers; Q6_K at the
//   other block types below Q8_0. Gemma 3's tied 262,144-row embedding is 30% of Gemma 3 1B.
// The measured mixes (Q4_K_M ...) already average their own output layer; only the row fallback
// changes them. The weights figure (estimate/estimate.cpp) prices what this file finds.
#include <cstdint>
#include <string>

#include "model/model.h"
#include "model/quant.h"

namespace vc {

struct QuantizeExceptions {
  uint64_t row_fallback_params = 0;  // layer matrices and an untied embedding whose rows are not whole blocks
  std::string row_fallback_type;
  uint64_t output_params = 0;        // the output layer (or the tied embedding), when its type differs
  std::string output_type;
  uint64_t params() const;
};

// What llama-quantize stores at another type at `tier` (a ggml block type or a llama.cpp mix; other
// formats have none).
QuantizeExceptions quantize_exceptions(const Model& model, const QuantFormat& tier);

// The layer matrices (and an untied embedding) whose rows are not whole `block`-value blocks. Per
// layer: matrices reading the hidden state (q, k, v, up, gate, experts' up and gate) when the hidden
// size is not a multiple of `block`; attention's output projection when heads x value width is not;
// down projections when their intermediate width is not. Latent (MLA) and recurrent mixers count as
// reading the hidden state whole (their inner widths are multiples of 256 in every published model).
// Norms and routers are never quantized and never counted.
uint64_t row_fallback_params(const Model& model, uint64_t block);

// The output layer's type at `tier` for a model of this hidden size; empty where the tier's own bits
// stand for it.
std::string output_layer_type(const QuantFormat& tier, uint64_t hidden);

}  // namespace vc
