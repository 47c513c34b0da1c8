#pragma once
// GGUF header(s) -> Model: geometry from the ARCH.* metadata keys (layer kinds from the tensors
// each block holds), parameters by class from the tensors, the native checkpoint as the exact sum
// of tensor bytes (measured = true).
#include <vector>

#include "model/model.h"
#include "sources/gguf/gguf_file.h"
#include "sources/tensor_tally.h"

namespace vc {

// The tensors of every shard, classified.
TensorTally tally_gguf(const std::vector<GgufFile>& shards);

// `shards` in order (one element for a single file); checks split.count / split.no agree.
Model model_from_gguf(const std::vector<GgufFile>& shards);

}  // namespace vc
