#pragma once
// Checked 64-bit arithmetic for byte and parameter counts. Overflow throws; it never wraps.
#include <cstdint>
#include <initializer_list>

#include "core/error.h"

namespace vc {

__extension__ typedef unsigned __int128 u128;  // exact intermediate products

inline uint64_t checked_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw OverflowError("byte count overflows 64 bits (addition)");
  return r;
}

inline uint64_t checked_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw OverflowError("byte count overflows 64 bits (multiplication)");
  return r;
}

inline uint64_t checked_product(std::initializer_list<uint64_t> factors) {
  uint64_t r = 1;
  for (uint64_t f : factors) r = checked_mul(r, f);
  return r;
}

inline uint64_t checked_sub(uint64_t a, uint64_t b) {
  if (b > a) throw OverflowError("byte count would go negative (subtraction)");
  return a - b;
}

// ceil(a / b) for b > 0.
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// a * num / den rounded to nearest, exact for any a whose product with num fits in 128 bits.
inline uint64_t mul_div_round(uint64_t a, uint64_t num, uint64_t den) {
  u128 p = static_cast<u128>(a) * num;
  p = (p + den / 2) / den;
  if (p > UINT64_MAX) throw OverflowError("byte count overflows 64 bits (scaling)");
  return static_cast<uint64_t>(p);
}

}  // namespace vc
