#pragma once
// The build ladder: each known build of a model with the seeds' overhead, and the cards it needs.
// Like the seed pages, the ladder counts weights plus overhead only (no cache): it answers "what
// box loads this file", and `estimate --quant BUILD` adds the cache for a given context.
#include <string>
#include <vector>

#include "model/model.h"

namespace vc {

struct LadderCardOption {
  std::string label;      // "128 GB unified", "B200 (192 GB)", "H200 (141 GB)"
  uint64_t card_bytes = 0;
  uint64_t cards = 0;
};

// The cards the ladder counts: a 128 GB unified-memory box, a B200 and an H200.
struct LadderCard {
  const char* label;
  uint64_t bytes;
};
inline constexpr LadderCard kLadderCards[] = {{"128 GB unified", 128'000'000'000ull}, {"192 GB (B200)", 192'000'000'000ull}, {"141 GB (H200)", 141'000'000'000ull}};

struct LadderRow {
  const Build* build = nullptr;
  uint64_t overhead_bytes = 0;
  uint64_t with_overhead = 0;
  double bits_per_param = 0;
  std::vector<LadderCardOption> options;
};

std::vector<LadderRow> build_ladder(const Model& model, uint32_t overhead_bp);

}  // namespace vc
