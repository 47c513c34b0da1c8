#pragma once
// Shared by the counts of the parts a config describes beside its text model (config_tower.cpp,
// config_omni.cpp, config_omni3.cpp): a linear layer's and a convolution's parameters and a count
// kept term by term.
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "core/checked.h"
#include "core/units.h"

namespace vc::census {

// in x out weights and, with a bias, out more.
inline uint64_t linear(uint64_t in, uint64_t out, bool bias) { return checked_add(checked_mul(in, out), bias ? out : 0); }

// A Conv1d (or ConvTranspose1d) of kernel k: in x out x k weights and, with a bias, out more.
inline uint64_t conv(uint64_t in, uint64_t out, uint64_t k, bool bias = true) { return checked_add(checked_product({in, out, k}), bias ? out : 0); }

// The count, term by term: "name = value" pieces and their sum.
struct Terms {
  uint64_t sum = 0;
  std::string text;
  void add(const std::string& what, uint64_t n) {
    sum = checked_add(sum, n);
    text += (text.empty() ? "" : "; ") + fmt::format("{} = {}", what, format_count(n));
  }
};

}  // namespace vc::census
