#include "engines/vllm_pipeline.h"

#include "core/error.h"

namespace vc {

std::vector<VllmStage> vllm_pipeline_stages(uint64_t layers, uint64_t pp) {
  if (pp == 0 || pp > layers) throw InputError("-pp", "must be from 1 to the layer count");
  std::vector<uint64_t> counts(pp, layers / pp);
  const uint64_t remainder = layers % pp;
  for (uint64_t i = 2; i < remainder + 2; ++i) counts[pp - i] += 1;  // partitions[-i] += 1
  std::vector<VllmStage> stages;
  uint64_t first = 0;
  for (uint64_t c : counts) {
    stages.push_back({first, c});
    first += c;
  }
  return stages;
}

}  // namespace vc
