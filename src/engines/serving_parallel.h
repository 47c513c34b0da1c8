#pragma once
// The parallel degrees of a pasted vLLM or SGLang command, under exactly the spellings each engine's
// own parser declares:
// - vLLM, vllm/engine/arg_utils.py (EngineArgs.add_cli_args, the ParallelConfig group):
//   --tensor-parallel-size / -tp, --pipeline-parallel-size / -pp, --data-parallel-size / -dp,
//   --data-parallel-size-local / -dpl, --enable-expert-parallel (BooleanOptionalAction: also
//   --no-enable-expert-parallel, and no value), and vllm/utils/argparse_utils.py's
//   FlexibleArgumentParser, which reads `_` in a long flag's name as `-`.
// - SGLang, python/sglang/srt/server_args.py (ServerArgs): --tp-size / --tensor-parallel-size,
//   --pp-size / --pipeline-parallel-size, --dp-size / --data-parallel-size, --ep-size /
//   --expert-parallel-size / --ep, --enable-dp-attention, the deprecated --enable-ep-moe (ep = tp);
//   argparse also takes an unambiguous prefix, so --tp and --dp are --tp-size and --dp-size (SGLang's
//   own docs write them), while --pp is refused as SGLang's argparse refuses it (it could be
//   --pp-size, --pp-max-micro-batch-size or --pp-async-batch-depth).
// Both take `--flag=value` (and `-tp=2`). parse_engine_command (engines/engine_run.h) reads them;
// plan's split and replicas follow (plan/serving_command.h).
#include <cstdint>
#include <string>

namespace vc {

struct ServingParallel {
  bool expert_parallel = false;       // vLLM --enable-expert-parallel; SGLang --ep-size N > 1 or --enable-ep-moe
  uint64_t expert_parallel_size = 0;  // SGLang --ep-size as given (0: not given; --enable-ep-moe: the TP size)
  uint64_t data_parallel = 1;         // --data-parallel-size / -dp (vLLM), --dp-size / --dp (SGLang)
  uint64_t data_parallel_local = 0;   // vLLM --data-parallel-size-local / -dpl (0: not given)
  bool dp_attention = false;          // SGLang --enable-dp-attention
};

// Every spelling above, for messages: "accepted: ...".
std::string serving_parallel_spellings(bool sglang);

}  // namespace vc
