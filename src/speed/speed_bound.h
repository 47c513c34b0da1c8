#pragma once
// The bounds the rule engine's speed figures are (plan/plan.cpp): decode reads every byte a token
// needs at each memory's peak bandwidth, prefill computes at each GPU's peak dense BF16 rate, with
// no fixed costs. validate --speed divides each measured run by them to learn the share of the
// bound real runs reach; the spread of that share over the fitted runs is the range the rule's
// tok/s carry (data/speed_efficiency.json, "rule_ranges"; docs/performance.md).
#include "speed/token_reads.h"

namespace vc {

// 1 / sum over memories of (weights + cache read there) / its bandwidth; 0 when a memory that is
// read has no known bandwidth.
double bandwidth_bound_tok_s(const TokenReads& t);

// 1 / sum over GPUs of FLOPs computed there / its peak; 0 when the CPU computes part of the prompt,
// weights are offloaded (the rule gives no prefill figure there) or a GPU's rate is unknown.
double compute_bound_tok_s(const TokenReads& t);

}  // namespace vc
