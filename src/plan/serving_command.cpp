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

SplitMode serving_split(const EngineRun& run, const std::string& given) {
  const ServingParallel& parallel = run.parallel;
  const uint64_t tp = command_tensor_parallel(run), pp = command_pipeline_parallel(run);
  SplitMode mode = SplitMode::Layer;  // one GPU: nothing to divide
  if (parallel.dp_attention) {
    // SGLang's own profile takes groups of several ranks (attn_tp_size = tp / dp: `estimate
    // --engine-command`); plan's ep split keeps attention whole on every rank, so it takes dp = tp only.
    if (parallel.data_parallel != tp)
      throw InputError("--engine-command", fmt::format("asks for --enable-dp-attention over {} groups of {} ranks: plan's split has no attention tensor-parallel "
                                                       "inside a group (estimate --engine-command answers it with SGLang's profile); accepted here: --dp-size "
                                                       "equal to --tp-size (attention whole on every rank), or --dp-size without --enable-dp-attention (whole replicas)",
                                                       parallel.data_parallel, tp / parallel.data_parallel));
    mode = SplitMode::Expert;
  } else if (tp > 1) {
    mode = parallel.expert_parallel ? SplitMode::TensorExpert : SplitMode::Tensor;
  } else if (pp > 1) {
    mode = SplitMode::Pipeline;
  }
  if (given != "layer" && !given.empty() && parse_split(given, "--split") != mode)
    throw InputError("--split", fmt::format("'{}' disagrees with the pasted command (TP {} x PP {}{}, split {}); leave --split out, the command sets it", given, tp, pp,
                                            parallel.expert_parallel ? " with expert parallel" : "", to_string(mode)));
  return mode;
}

bool experts_over_data_parallel(const EngineRun& run, const Model& model) {
  if (run.engine != EngineKind::Vllm || run.parallel.data_parallel <= 1) return false;
  for (const auto& l : model.layers) {
    if (l.feed_forward.kind == FeedForwardKind::MoE) return true;
  }
  return false;
}

ServingLayout serving_layout(const EngineRun& run, const Box& box, const Model& model, SplitMode split) {
  if (box.gpus.empty()) throw InputError("--engine-command", "is a GPU server's command; name the GPUs with --gpu");
  const uint64_t tp = command_tensor_parallel(run), pp = command_pipeline_parallel(run);
  const uint64_t dp = run.parallel.data_parallel;
  // SGLang's DP attention runs inside the TP ranks (server_args.py): TP x PP GPUs in all.
  const uint64_t ranks = run.parallel.dp_attention ? tp * pp : tp * pp * dp;  // each at most 1024 (the parser's bound)
  const std::string degrees = dp > 1 ? fmt::format("TP {} x PP {} x DP {}{}", tp, pp, dp, run.parallel.dp_attention ? " (DP attention within TP)" : "")
                                     : fmt::format("TP {} x PP {}", tp, pp);
  if (ranks != box.device_count())
    throw InputError("--engine-command", fmt::format("runs {} = {} ranks, but the box has {} GPUs ({}); give --gpu and --nodes with one GPU per rank",
                                                     degrees, ranks, box.device_count(), box.describe()));
  const uint64_t per_node = box.gpus.size();
  ServingLayout out{1, box, split, 1};
  if (experts_over_data_parallel(run, model)) {
    if (tp > 1 || pp > 1)
      throw InputError("--engine-command", fmt::format("runs {} on an MoE model: vLLM shards its experts over TP x DP ranks while attention stays TP {}, which "
                                                       "is not modelled beyond TP 1; accepted: -dp N --enable-expert-parallel (TP 1), or -tp N without -dp",
                                                       degrees, tp));
    out.split = SplitMode::Expert;  // the plan's own ep split: `vllm serve ... --data-parallel-size N --enable-expert-parallel`
    out.engine_ranks_per_tp = dp;
    return out;
  }
  if (dp > 1 && !run.parallel.dp_attention) {
    const bool side_by_side = pp == 1 && tp <= per_node && per_node % tp == 0;  // replicas within nodes
    const bool whole_nodes = tp == per_node && box.nodes % pp == 0;              // each replica on PP nodes
    if (!side_by_side && !whole_nodes)
      throw InputError("--engine-command", fmt::format("runs {} on {}; plan places a replica's TP ranks within a node (TP dividing the {} GPUs of a node) and its "
                                                       "PP stages on whole nodes",
                                                       degrees, box.describe(), per_node));
    if (run.parallel.data_parallel_local && side_by_side && run.parallel.data_parallel_local * box.nodes != dp)
      throw InputError("--engine-command", fmt::format("runs {} replicas per node (--data-parallel-size-local) on {} nodes, not the {} of -dp",
                                                       run.parallel.data_parallel_local, box.nodes, dp));
    out.replicas = dp;
    if (side_by_side) {
      out.box.gpus.resize(tp);
      out.box.nodes = 1;
    } else {
      out.box.nodes = pp;
    }
    return out;
  }
  if (tp > 1 && pp > 1 && (tp != per_node || pp != box.nodes))
    throw InputError("--engine-command", fmt::format("runs TP {} x PP {}; plan places tensor parallel within a node and pipeline stages across nodes: "
                                                     "TP must be the GPUs per node ({}) and PP the nodes ({})",
                                                     tp, pp, per_node, box.nodes));
  return out;
}

}  // namespace vc
