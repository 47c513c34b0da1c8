#include "estimate/ladder.h"

#include <algorithm>

#include "core/checked.h"

namespace vc {

std::vector<LadderRow> build_ladder(const Model& model, uint32_t overhead_bp) {
  static const std::vector<std::pair<std::string, uint64_t>> kOptions = {
      {"128 GB unified", 128'000'000'000ull}, {"192 GB (B200)", 192'000'000'000ull}, {"141 GB (H200)", 141'000'000'000ull}};
  std::vector<LadderRow> rows;
  for (const auto& b : model.builds) {
    LadderRow r;
    r.build = &b;
    r.overhead_bytes = mul_div_round(b.bytes, overhead_bp, 10000);
    r.with_overhead = checked_add(b.bytes, r.overhead_bytes);
    const uint64_t params = model.params.total();
    r.bits_per_param = params ? static_cast<double>(b.bytes) * 8.0 / static_cast<double>(params) : 0;
    for (const auto& [label, size] : kOptions) r.options.push_back({label, size, ceil_div(r.with_overhead, size)});
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const LadderRow& a, const LadderRow& b) { return a.build->bytes < b.build->bytes; });
  return rows;
}

}  // namespace vc
