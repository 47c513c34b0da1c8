#include "estimate/sweep.h"

#include "core/error.h"

namespace vc {

std::vector<SweepRow> sweep(const Model& model, const Scenario& base, const std::vector<uint64_t>& contexts) {
  if (contexts.empty()) throw InputError("--contexts", "is empty; give a list such as 8K,32K,1M");
  if (contexts.size() > 64) throw InputError("--contexts", "lists more than 64 contexts");
  std::vector<SweepRow> rows;
  for (uint64_t c : contexts) {
    Scenario s = base;
    s.context = c;
    EngineRequest r;
    r.model = &model;
    r.scenario = s;
    SweepRow row{estimate(model, s), 0, run_engine(r)};
    if (!rows.empty()) row.saving_vs_previous = static_cast<int64_t>(rows.back().estimate.total_bytes) - static_cast<int64_t>(row.estimate.total_bytes);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace vc
