#pragma once
// Upper bounds for geometry read from files: far above any real model, low enough that every
// product of them fits in 64 bits with room to spare.
#include <cstdint>

namespace vc::limits {

inline constexpr uint64_t kLayers = 4096;
inline constexpr uint64_t kHidden = uint64_t{1} << 20;
inline constexpr uint64_t kHeads = uint64_t{1} << 14;
inline constexpr uint64_t kHeadDim = uint64_t{1} << 14;
inline constexpr uint64_t kExperts = uint64_t{1} << 16;
inline constexpr uint64_t kVocab = uint64_t{1} << 24;
inline constexpr uint64_t kWidth = uint64_t{1} << 22;
inline constexpr uint64_t kWindow = uint64_t{1} << 34;
inline constexpr uint64_t kStateDim = uint64_t{1} << 16;

}  // namespace vc::limits
