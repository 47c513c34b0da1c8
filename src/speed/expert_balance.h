#pragma once
// Expert parallelism at one sequence: a token's k routed experts land on the ranks that hold them,
// and every rank waits for the busiest at each MoE layer. With uniform routing (k distinct experts
// of E, each equally likely) and the experts dealt to ranks as vLLM's determine_expert_map deals
// them (E / N each, the first E % N ranks one more), the busiest rank's expected share is
//   E[max] = sum over m = 1..k of (1 - P(every rank holds fewer than m of the k)),
//   P(every rank < m) = [x^k] prod over ranks of (sum over j < m of C(c_r, j) x^j) / C(E, k),
// exact for the multivariate hypergeometric (8 of 128 experts over 4 ranks: 3.49, not the mean 2).
#include <cstdint>

namespace vc {

// The expected number of a token's k experts the busiest of `ranks` holds (k when ranks is 1).
double expected_busiest_rank_experts(uint64_t experts, uint64_t k, uint64_t ranks);

}  // namespace vc
