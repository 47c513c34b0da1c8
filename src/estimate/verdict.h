#pragma once
// The verdict: card counts and a plain-words paragraph computed from an estimate's figures.
#include "estimate/estimate.h"

namespace vc {

// Card sizes the verdict counts in (decimal GB): consumer, 80 GB class, H200, B200/MI300X class.
inline constexpr uint64_t kVerdictCardSizes[] = {24'000'000'000, 80'000'000'000, 141'000'000'000, 192'000'000'000};
inline constexpr uint64_t kCardsPerNode = 8;

Verdict make_verdict(const Estimate& e);

}  // namespace vc
