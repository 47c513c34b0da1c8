#pragma once
// The engines behind run_engine (engine.h), one file each; shared helpers for building answers.
#include "engines/engine.h"
#include "engines/serving_cpu_offload.h"

namespace vc::engines {

EngineAnswer rule(const EngineRequest& request);
EngineAnswer llamacpp(const EngineRequest& request, const EngineRun& run);
EngineAnswer vllm(const EngineRequest& request, const EngineRun& run);
EngineAnswer sglang(const EngineRequest& request, const EngineRun& run);

// The allocation kind of an estimate line ("weights", "cache.*", "state.*", "overhead").
AllocKind kind_of_line(const std::string& line_id);
Allocation from_line(const Line& line);
// A serving engine's rank i of TP x PP, named "rank 3 (tp1 pp1)" (TP varies fastest, as vLLM numbers them).
std::string rank_name(uint64_t rank, uint64_t tensor_parallel);
// One rank's share of the weights when they split evenly over tp x pp ranks.
Allocation even_weights_line(uint64_t weight_bytes, uint64_t tensor_parallel, uint64_t pipeline_parallel, const std::string& source);
// A serving engine asked without a card: the KV line is what the scenario needs on a rank (the
// engine sizes its pool from the card it was not given), and the note the answer carries.
Allocation scenario_kv_line(uint64_t bytes, std::string formula, const std::string& pool_rule, const std::string& source);
std::string no_card_note(const std::string& engine_name);
// --cpu-offload-gb (serving_cpu_offload.h), when on: the setting, the host with every rank's moved
// parameters in pinned (page-locked) host memory (capacity the box's RAM where given), and a note
// with `how_read`, how the engine reads them back each forward.
void add_cpu_offload_host(EngineAnswer& a, const CpuOffload& o, uint64_t ranks, const EngineRequest& r, const std::string& source, const std::string& how_read);
// Sets total_bytes and every device's fits from its capacity.
void finish(EngineAnswer& answer);

}  // namespace vc::engines
