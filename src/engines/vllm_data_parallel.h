#pragma once
// vLLM's data parallel with expert parallel on an MoE model (`vllm serve M --data-parallel-size N
// --enable-expert-parallel`, tensor parallel 1 on each DP rank; plan's ep split writes it). Read
// from vLLM's source (docs/engines.md, "Data parallel with expert parallel"):
//   - each DP rank is its own engine core (v1/engine/core.py DPEngineCoreProc) with its own
//     scheduler over the same config: max_num_seqs and max_num_batched_tokens are a rank's, not
//     divided (v1/core/sched/scheduler.py: self.max_num_running_reqs = scheduler_config.max_num_seqs);
//   - each rank profiles and sizes its own KV cache (gpu_worker.py determine_available_memory), with
//     every KV head (TP 1), holding only the sequences routed to it;
//   - attention, embeddings, output head, dense MLP layers, shared experts and the router are whole
//     on every rank (TP 1); the routed experts are split over ep_size = DP x TP ranks
//     (model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make), the first E % N
//     ranks holding one more (fused_moe/layer.py determine_expert_map: "local_num_experts =
//     base_experts + 1 if ep_rank < remainder else base_experts");
//   - vLLM's default all2all backend, allgather_reducescatter, all-gathers the N ranks' hidden
//     states, top-k weights and ids before the experts and reduce-scatters after
//     (fused_moe/all2all_utils.py, device_communicators/all2all.py), so each rank's fused-MoE
//     workspaces are sized for N x max_num_batched_tokens rows in the profile run, and the gathered
//     input and the experts' output (N x T x hidden each) are live at the MoE layer.
#include <cstdint>
#include <string>

#include "model/model.h"

namespace vc {

struct VllmExpertShard {
  uint64_t ranks = 1;          // ep_size = DP x TP
  uint64_t loaded_bytes = 0;   // the checkpoint as vLLM loads it
  uint64_t experts = 0;        // routed experts of an MoE layer (the largest over the layers)
  uint64_t local_experts = 0;  // on rank 0, which holds the most: experts / ranks, + 1 when it does not divide
  uint64_t routed_bytes = 0;   // the routed experts of the loaded checkpoint, every layer
  uint64_t rank_routed = 0;    // of which rank 0 holds
  uint64_t lighter_ranks = 0;  // ranks holding one expert a layer fewer than rank 0
};

// The routed experts of `loaded_bytes` (the whole checkpoint as vLLM loads it) over `ranks`
// expert-parallel ranks: their share of the checkpoint's bytes (loaded_share_bytes: per class where
// the reader read them, else by parameters), and rank 0's local experts of each MoE layer. The MTP
// layers' experts are not among them (the target does not build those layers: mtp_weight_bytes).
VllmExpertShard vllm_expert_shard(const Model& model, uint64_t loaded_bytes, uint64_t ranks);

// --max-num-seqs for `sequences` over `data_parallel` DP ranks: each rank's scheduler takes its own
// share, ceil(sequences / data_parallel) (1 rank: the sequences).
uint64_t vllm_max_num_seqs_for(uint64_t sequences, uint64_t data_parallel);

// What each DP rank's answer is made of, for the answer's notes.
std::string vllm_data_parallel_note(uint64_t ranks, const VllmExpertShard& shard);

}  // namespace vc
