#pragma once
// vLLM's budget with a drafter (--speculative-config), on top of vllm_budget.h. What speculative
// decoding adds on each rank, as vLLM v1's profile run and graph capture meet it:
//   weights   the drafter loads with the target, before the profile run (gpu_model_runner.py
//             load_model: drafter.load_model), so the KV cache gets that much less;
//   buffers   the proposer's persistent [max_num_batched_tokens, draft hidden] hidden_states and
//             inputs_embeds buffers at the model dtype, allocated with the model runner
//             (v1/spec_decode/llm_base_proposer.py SpecDecodeBaseProposer.__init__);
//   pass      _dummy_run runs drafter.dummy_run(num_tokens) over the same max_num_batched_tokens
//             right after the target's pass, while the target's hidden states (and EAGLE-3's three
//             auxiliary hidden states) are still held; it runs num_speculative_tokens passes one
//             after the other, so one pass is its peak (llm_base_proposer.py dummy_run);
//   sampler   _dummy_sampler_run then runs the rejection sampler on one draft token a request: it
//             holds [max_num_seqs + max_num_seqs, vocab] logits at the logits dtype while the bonus
//             tokens go through the same sampler over max_num_seqs rows (gpu_model_runner.py
//             _dummy_sampler_run, v1/sample/rejection_sampler.py); draft probabilities are held only
//             with draft_sample_method "probabilistic" (default "greedy": none);
//   graphs    the drafter's layers are captured with the target's batch sizes in the same loop
//             (gpu_model_runner.py _dummy_run: drafter.dummy_run(use_cudagraphs, is_graph_capturing)).
// n-gram drafting loads nothing and runs no pass, but the rejection sampler's dummy run is the same.
#include <cstdint>
#include <string>

#include "engines/vllm_budget.h"
#include "model/model.h"

namespace vc {

struct VllmSpecInput {
  bool on = false;                     // speculative decoding configured (any method)
  std::string method;                  // draft_model, eagle, eagle3, mtp, ngram
  const Model* drafter = nullptr;      // the drafter's pass: its layers and hidden size (nullptr: none, n-gram)
  uint64_t rank_weights = 0;           // the drafter's weights on this rank
  const Model* cache_model = nullptr;  // the target's and the drafter's layers whose K/V a token holds (nullptr: the target's)
  uint64_t num_speculative_tokens = 0; // k: a decode step's query is 1 + k tokens (the CUDA graphs' capture sizes follow it)
};

struct VllmSpecProfile {
  uint64_t held_hidden = 0;          // the target's hidden states held through the drafter's pass
  uint64_t draft_forward = 0;        // the drafter's own pass over max_num_batched_tokens
  uint64_t draft_moe_workspace = 0;  // its fused-MoE workspace (the shared workspace takes the larger)
  uint64_t buffers = 0;              // the proposer's persistent hidden_states + inputs_embeds
  uint64_t rejection_logits = 0;     // [2 x max_num_seqs, vocab] logits held by the rejection sampler's dummy run
  uint64_t graph_layers = 0;         // drafter layers whose CUDA graphs are captured
  uint64_t pass() const { return held_hidden + draft_forward; }
};

struct VllmSpecBudget {
  VllmBudget budget;  // the rank's budget with the drafter's parts in it
  VllmSpecProfile spec;
};

// The profile run's forward pass over `tokens` tokens on one rank, without the MoE workspace, and
// the fused-MoE workspace for that batch: the formulas vllm_budget uses (fitted, docs/accuracy.md).
uint64_t vllm_forward_peak(const Model& model, uint64_t tokens, uint64_t tp, uint64_t value_bytes);
uint64_t vllm_moe_workspace(const Model& model, uint64_t tokens, uint64_t tp, uint64_t value_bytes);

// vllm_budget with the drafter: `spec.on` false gives vllm_budget's answer unchanged.
VllmSpecBudget vllm_budget_speculative(const Model& model, const VllmBudgetSettings& settings, const VllmSpecInput& spec);

inline constexpr const char* kVllmSpecProfileSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/v1/worker/gpu_model_runner.py (_dummy_run: drafter.dummy_run; _dummy_sampler_run: "
    "rejection_sampler); https://github.com/vllm-project/vllm/blob/main/vllm/v1/spec_decode/llm_base_proposer.py (dummy_run, persistent buffers)";

}  // namespace vc
