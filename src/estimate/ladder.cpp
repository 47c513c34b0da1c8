#include "estimate/ladder.h"

#include <algorithm>

#include "core/checked.h"

namespace vc {

std::vector<LadderRow> build_ladder(const Model& model, uint32_t overhead_bp) {
  std::vector<LadderRow> rows;
  for (const auto& b : model.builds) {
    LadderRow r;
    r.build = &b;
    r.overhead_bytes = mul_div_round(b.bytes, overhead_bp, 10000);
    r.with_overhead = checked_add(b.bytes, r.overhead_bytes);
    const uint64_t params = model.params.total();
    r.bits_per_param = params ? static_cast<double>(b.bytes) * 8.0 / static_cast<double>(params) : 0;
    for (const auto& card : kLadderCards) r.options.push_back({card.label, card.bytes, ceil_div(r.with_overhead, card.bytes)});
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const LadderRow& a, const LadderRow& b) { return a.build->bytes < b.build->bytes; });
  return rows;
}

}  // namespace vc
