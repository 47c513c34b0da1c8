#include "plan/serving_command.h"

#include <fmt/format.h>

#include "core/error.h"

namespace vc {

bool is_serving_command(const EngineRun& run) { return run.engine == EngineKind::Vllm || run.engine == EngineKind::Sglang; }

uint64_t command_tensor_parallel(const EngineRun& run) {
  return run.engine == EngineKind::Sglang ? run.sglang.tensor_parallel : run.vllm.kv.tensor_parallel;
}

uint64_t command_pipeline_parallel(const EngineRun& run) {
  return run.engine == EngineKind::Sglang ? run.sglang.pipeline_parallel : run.vllm.kv.pipeline_parallel;
}

SplitMode serving_split(const EngineRun& run, const ServingParallel& parallel, const std::string& given) {
  if (parallel.data_parallel > 1)
    throw InputError("--engine-command", fmt::format("asks for {} data-parallel replicas; plan models one replica's ranks: paste the command without "
                                                     "--data-parallel-size / --dp, or leave the command out and use --split ep",
                                                     parallel.data_parallel));
  const uint64_t tp = command_tensor_parallel(run), pp = command_pipeline_parallel(run);
  SplitMode mode = SplitMode::Layer;  // one GPU: nothing to divide
  if (tp > 1) mode = parallel.expert_parallel ? SplitMode::TensorExpert : SplitMode::Tensor;
  else if (pp > 1) mode = SplitMode::Pipeline;
  if (given != "layer" && !given.empty() && parse_split(given, "--split") != mode)
    throw InputError("--split", fmt::format("'{}' disagrees with the pasted command (TP {} x PP {}{}, split {}); leave --split out, the command sets it", given, tp, pp,
                                            parallel.expert_parallel ? " with expert parallel" : "", to_string(mode)));
  return mode;
}

void check_serving_degrees(const EngineRun& run, const Box& box) {
  if (box.gpus.empty()) throw InputError("--engine-command", "is a GPU server's command; name the GPUs with --gpu");
  const uint64_t tp = command_tensor_parallel(run), pp = command_pipeline_parallel(run);
  const uint64_t ranks = tp * pp;  // both at most 1024 (the parser's bound)
  if (ranks != box.device_count())
    throw InputError("--engine-command", fmt::format("runs TP {} x PP {} = {} ranks, but the box has {} GPUs ({}); give --gpu and --nodes with one GPU per rank",
                                                     tp, pp, ranks, box.device_count(), box.describe()));
  if (tp > 1 && pp > 1 && (tp != box.gpus.size() || pp != box.nodes))
    throw InputError("--engine-command", fmt::format("runs TP {} x PP {}; plan places tensor parallel within a node and pipeline stages across nodes: "
                                                     "TP must be the GPUs per node ({}) and PP the nodes ({})",
                                                     tp, pp, box.gpus.size(), box.nodes));
}

void set_serving_context(EngineRun& run, uint64_t context) {
  run.vllm.kv.max_model_len = context;
  run.sglang.context_length = context;
}

void apply_serving_command(const EngineRun& run, Scenario& scenario, bool context_given, bool cache_dtype_given) {
  if (!context_given) {
    if (run.engine == EngineKind::Vllm) scenario.context = run.vllm.kv.max_model_len;
    if (run.engine == EngineKind::Sglang && run.sglang.context_length) scenario.context = run.sglang.context_length;
  }
  // The cache bytes the speed reads: fp8 where the command stores fp8 (vLLM fp8 is e4m3).
  const std::string& kv = run.engine == EngineKind::Sglang ? run.sglang.kv_cache_dtype : run.vllm.kv.kv_cache_dtype;  // the engines' own lower-case names
  if (!cache_dtype_given && kv.rfind("fp8", 0) == 0) scenario.cache_dtype = kv == "fp8_e5m2" ? "FP8_E5M2" : "FP8_E4M3";
}

}  // namespace vc
