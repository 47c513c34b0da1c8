#pragma once
// What llama.cpp's CPU backend holds for a GGUF model's weights: the memory-mapped span of the
// file (CPU_Mapped) and the repacked copies it makes of the weights its AVX2 matrix kernels read
// in interleaved blocks (CPU_REPACK). A repacked tensor leaves the mapped span, but the span runs
// from the first to the last tensor still mapped, so gaps in between stay mapped. Rules and
// sources: docs/engines.md ("CPU model buffer").
#include <cstdint>
#include <string>

#include <vector>

#include "sources/gguf/gguf_file.h"

namespace vc {

struct LlamaCppCpuWeights {
  uint64_t mapped_bytes = 0;      // CPU_Mapped: per file, last mapped tensor's end - first one's start
  uint64_t repack_bytes = 0;      // CPU_REPACK: repacked tensors, each padded to 32 bytes
  uint64_t repacked_tensors = 0;
  uint64_t total() const { return mapped_bytes + repack_bytes; }
};

// Whether llama.cpp (CPU backend, x86 with AVX2) repacks this tensor: a Q4_0, Q4_K, IQ4_NL or MXFP4
// matrix with a multiple of 8 rows that a matrix multiplication reads (2-D weights, 3-D expert
// stacks); never the token embedding, which is read by row lookups.
bool llamacpp_repacks(const GgufTensor& t);

// From the GGUF headers (every file of a split set, in order): each tensor's type, shape and offset.
LlamaCppCpuWeights llamacpp_cpu_weights(const std::vector<GgufFile>& shards);

}  // namespace vc
