#pragma once
// Expert and data parallelism in a pasted vLLM or SGLang command (vLLM --enable-expert-parallel,
// --data-parallel-size / -dp; SGLang --ep / --ep-size / --expert-parallel-size N > 1,
// --enable-ep-moe, --dp / --dp-size / --data-parallel-size). The per-rank answer treats expert-
// parallel ranks as tensor-parallel ones; plan reads these for its split (plan/serving_command.h).
#include <cstdint>
#include <string>

namespace vc {

struct ServingParallel {
  bool expert_parallel = false;
  uint64_t data_parallel = 1;
};

// InputError naming the flag for a bad value; the command is otherwise read by parse_engine_command.
ServingParallel serving_parallel(const std::string& command);

}  // namespace vc
