#include "engines/serving_dtype.h"

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"

namespace vc {

uint64_t serving_dtype_bytes(const std::string& dtype) {
  if (dtype == "auto" || dtype == "float16" || dtype == "half" || dtype == "bfloat16") return 2;
  if (dtype == "float32" || dtype == "float") return 4;
  throw InputError("--dtype", "'" + dtype + "' is not a serving dtype; accepted: auto, half, float16, bfloat16, float, float32");
}

uint64_t loaded_weight_bytes(const Model& model, uint64_t tier_bytes, const std::string& dtype) {
  const uint64_t value_bytes = serving_dtype_bytes(dtype);
  if (tier_bytes != model.native.bytes) return tier_bytes;
  if (model.native.bytes_by_class.empty()) {
    const bool unquantized = model.native.format == "BF16" || model.native.format == "F16" || model.native.format == "F32";
    return unquantized ? checked_mul(model.params.total(), value_bytes) : tier_bytes;
  }
  uint64_t total = 0;
  for (const auto& [cls, bytes] : model.native.bytes_by_class) {
    auto it = model.params.by_class.find(cls);
    const uint64_t n = it == model.params.by_class.end() ? 0 : it->second;
    total = checked_add(total, loaded_class_bytes(n, bytes, value_bytes));
  }
  return total;
}

uint64_t loaded_class_bytes(uint64_t params, uint64_t stored_bytes, uint64_t value_bytes) {
  const bool unquantized = params > 0 && (stored_bytes == checked_mul(params, 2) || stored_bytes == checked_mul(params, 4));
  return unquantized ? checked_mul(params, value_bytes) : stored_bytes;
}

uint64_t loaded_share_bytes(const Model& model, uint64_t whole_bytes, uint64_t stored, uint64_t params) {
  if (stored && !model.native.bytes_by_class.empty() && model.native.bytes)
    return static_cast<uint64_t>(static_cast<u128>(whole_bytes) * std::min(stored, model.native.bytes) / model.native.bytes);
  const uint64_t total = model.params.total();
  return total ? static_cast<uint64_t>(static_cast<u128>(whole_bytes) * std::min(params, total) / total) : 0;
}

}  // namespace vc
