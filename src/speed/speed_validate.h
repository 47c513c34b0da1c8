#pragma once
// `vramcalc validate --speed FILE`: every published speed in tests/data/speed-measurements.json
// recomputed from its model, weights tier, devices, engine and settings, beside what was measured.
// Rows carry their part ("fitted", or "set-aside" when fixed aside by the hash rule before any
// fitting) and their group (decode on one memory system, decode with offload, decode with mapped
// weights paged in from an SSD, prefill), so the summary reports each apart. The targets: decode
// within 0.8-1.25x on one memory system, 0.7-1.4x with offload, 0.5-2x from an SSD (nothing there
// is fitted: the SSD is read at the rate the source states, and the page cache's locality is not
// modelled); prefill within 0.5-2x.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "speed/speed_estimate.h"

namespace vc {

struct SpeedRow {
  std::string id;
  std::string group;      // "decode on device", "decode offload", "decode from SSD", "prefill"
  std::string part;       // "fitted" or "set-aside"
  std::string setup;      // model, tier, devices, engine in words
  double measured = 0;
  double estimate = 0;    // 0: not computed (see note)
  double ratio = 0;       // measured / estimate
  // The rule engine's bound for the run's placement (speed/speed_bound.h; decode: bandwidth,
  // prefill: compute on the GPUs alone, 0 where the rule gives no prefill) and measured / bound.
  double bound = 0;
  double bound_share = 0;
  bool met = false;
  std::string note;
  nlohmann::json reads;   // the token reads (memories, hand-offs) the estimate used: for the fit
};

std::vector<SpeedRow> validate_speed(const std::string& measurements_json);

// A measured run whose llama.cpp weights are memory-mapped from an SSD: the bytes of the weights
// the CPU holds (its "ram" memories) beyond what the page cache held, which the OS reads from the
// SSD again (TokenReads' paged_out); 0 when the cache holds them all.
uint64_t paged_out_of(const TokenReads& t, uint64_t page_cache_bytes);

struct SpeedSummary {
  std::string group, part;
  std::size_t cases = 0, met = 0;
  std::size_t inside_range = 0;  // runs inside the range the printed tok/s carries
  double median_ratio = 0;
  double low = 0, high = 0;  // target band
};
// The engine model: measured / estimate, and the runs inside the range it prints.
std::vector<SpeedSummary> summarize_speed(const std::vector<SpeedRow>& rows, const SpeedData& data = SpeedData::builtin());
// The rule engine at its efficiencies (the share of the bound it expects: decode and prefill):
// measured / (bound x efficiency), and the runs inside its printed range (rule_ranges).
std::vector<SpeedSummary> summarize_rule_speed(const std::vector<SpeedRow>& rows, double decode_efficiency, double prefill_efficiency,
                                               const SpeedData& data = SpeedData::builtin());

// The band a group must land in, measured / estimate.
std::pair<double, double> speed_target(const std::string& group);

}  // namespace vc
