#pragma once
// Storage formats for weights and caches, loaded from data/quant_formats.json.
// A block type's bits per weight come from its block layout; a llama.cpp mix's from a measurement.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vc {

// Exact bits per weight as a ratio: bits = numerator / denominator.
struct BitsPerWeight {
  uint64_t numerator = 16;
  uint64_t denominator = 1;
  double value() const { return static_cast<double>(numerator) / static_cast<double>(denominator); }
  // Bytes for `elements` values, rounded to nearest (exact for whole blocks).
  uint64_t bytes_for(uint64_t elements) const;
};

struct QuantFormat {
  std::string name;
  std::vector<std::string> aliases;
  bool is_mix = false;          // a llama.cpp recipe, not a single block type
  uint64_t block_elems = 1;     // 0 for mixes
  uint64_t block_bytes = 2;     // 0 for mixes
  BitsPerWeight bits;
  std::string kind;             // float, int, ggml, mix
  std::string source;
  // llama-quantize's type for a matrix whose row width is not a multiple of row_block values
  // (model/row_fallback.h); empty where the tier has none (block types of 32, floats).
  std::string row_fallback;
  uint64_t row_block = 0;
  // "8.5" / "4.85": the bits per weight as people write them.
  std::string bits_text() const;
  // Bytes of `elements` values stored as whole rows of this block type: ceil(elements/block) blocks.
  uint64_t row_bytes(uint64_t elements) const;
};

class QuantTable {
 public:
  static const QuantTable& builtin();
  explicit QuantTable(std::string_view json_text);

  // A weights tier: mixes first (Q4_K_M, Q2_K as llama.cpp recipes), then block types.
  const QuantFormat* find_tier(std::string_view name) const;
  // A storage type only (cache dtypes, tensor types): never a mix.
  const QuantFormat* find_type(std::string_view name) const;
  const std::vector<QuantFormat>& all() const { return formats_; }
  // "F32, F16, BF16, ..." for error messages.
  std::string names(bool include_mixes) const;

 private:
  std::vector<QuantFormat> formats_;
};

}  // namespace vc
