#pragma once
// A pasted vLLM or SGLang command in `plan`: its parallel degrees (engines/serving_parallel.h:
// TP, PP, EP, DP with each engine's own spellings) become the plan's split and replicas, and
// the command itself (--gpu-memory-utilization, --mem-fraction-static, --kv-cache-dtype,
// --max-num-seqs, --max-model-len / --context-length ...) is what the engine's per-device answer
// is made for, at the plan's context.
#include <cstdint>

#include "engines/engine_run.h"
#include "engines/serving_parallel.h"
#include "estimate/scenario.h"
#include "plan/hardware.h"
#include "model/model.h"
#include "plan/split.h"

namespace vc {

bool is_serving_command(const EngineRun& run);  // vLLM or SGLang

// TP and PP as the command gives them (1 when absent).
uint64_t command_tensor_parallel(const EngineRun& run);
uint64_t command_pipeline_parallel(const EngineRun& run);

// The split the command's degrees make: TP (+EP) within a node, PP across nodes or stages; SGLang's
// --enable-dp-attention with --dp-size = --tp-size is the plan's own ep split (attention whole on
// every rank, experts divided). `given` is --split as typed ("layer" when left out); InputError when
// it disagrees, or for DP attention over fewer groups than TP ranks (not modelled).
SplitMode serving_split(const EngineRun& run, const std::string& given);

// How the command's ranks sit on the box for this model:
// - data parallel on a dense model (vLLM) or without DP attention (SGLang): `replicas` whole copies,
//   each on `box` (TP GPUs of a node, or PP whole nodes); every per-GPU figure is one replica's;
// - vLLM data parallel on an MoE model: one engine over TP x DP ranks, since vLLM's fused-MoE layers
//   shard experts over TP x DP (FusedMoEParallelConfig, vllm/model_executor/layers/fused_moe/config.py):
//   the plan's ep split, as the command the plan itself prints for --split ep;
// - otherwise the box itself.
// InputError naming --engine-command when the ranks are not the box's GPUs or sit where plan cannot.
struct ServingLayout {
  uint64_t replicas = 1;
  Box box;         // one replica's devices
  SplitMode split;
  uint64_t engine_ranks_per_tp = 1;  // vLLM MoE with DP: the engine answers for TP x DP ranks
};
ServingLayout serving_layout(const EngineRun& run, const Box& box, const Model& model, SplitMode split);

// vLLM data parallel on an MoE model: the engine's ranks are TP x DP (see ServingLayout).
bool experts_over_data_parallel(const EngineRun& run, const Model& model);

}  // namespace vc
