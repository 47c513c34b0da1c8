#pragma once
// A pasted vLLM or SGLang command in `plan`: its parallel degrees (--tensor-parallel-size / --tp,
// --pipeline-parallel-size / --pp, --enable-expert-parallel / --ep) become the plan's split, and
// the command itself (--gpu-memory-utilization, --mem-fraction-static, --kv-cache-dtype,
// --max-num-seqs, --max-model-len / --context-length ...) is what the engine's per-device answer
// is made for, at the plan's context.
#include <cstdint>

#include "engines/engine_run.h"
#include "engines/serving_parallel.h"
#include "estimate/scenario.h"
#include "plan/hardware.h"
#include "plan/split.h"

namespace vc {

bool is_serving_command(const EngineRun& run);  // vLLM or SGLang

// TP and PP as the command gives them (1 when absent).
uint64_t command_tensor_parallel(const EngineRun& run);
uint64_t command_pipeline_parallel(const EngineRun& run);

// The split the command's degrees make: TP (+EP) within a node, PP across nodes or stages.
// `given` is --split as typed ("layer" when left out); InputError when it disagrees, or for data
// parallel replicas, which the per-rank figures do not model.
SplitMode serving_split(const EngineRun& run, const ServingParallel& parallel, const std::string& given);

// InputError naming --engine-command when TP x PP is not the box's devices (TP the GPUs of a node,
// PP the nodes, when both are above 1).
void check_serving_degrees(const EngineRun& run, const Box& box);

// The command at another context (the plan's solvers try several): --max-model-len / --context-length.
void set_serving_context(EngineRun& run, uint64_t context);

// The scenario the command implies where the user gave no flag: its context, and an fp8 cache.
void apply_serving_command(const EngineRun& run, Scenario& scenario, bool context_given, bool cache_dtype_given);

}  // namespace vc
