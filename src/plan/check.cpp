#include "plan/check.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/units.h"

namespace vc {

const char* to_string(FitKind k) {
  switch (k) {
    case FitKind::Gpu: return "gpu";
    case FitKind::Offload: return "offload";
    case FitKind::None: return "none";
    case FitKind::Unavailable: return "unreleased";
  }
  return "none";
}

CheckRow check_model(const Model& model, const Box& box, const PlanOptions& o, const Scenario& base) {
  if (!model.weights_available()) {  // no tier, fit or speed for weights nobody can download
    CheckRow row;
    row.model = &model;
    row.fit = FitKind::Unavailable;
    row.note = fmt::format("{}: {}; no fit or command line until the weights are published", status_text(model.status), model.status_note);
    return row;
  }
  // Candidate tiers, largest weights first, one per distinct size (clamped tiers collapse into native).
  std::vector<std::pair<std::string, uint64_t>> tiers;
  auto add = [&](const std::string& quant) {
    const WeightsFigure w = resolve_weights(model, quant);
    for (const auto& t : tiers) if (t.second == w.bytes) return;
    tiers.emplace_back(quant, w.bytes);
  };
  add("");
  for (const auto& b : model.builds) add(b.name);
  for (const char* t : kCheckTiers) add(t);
  std::stable_sort(tiers.begin(), tiers.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  Scenario s = base;
  if (model.max_context) s.context = std::min(s.context, model.max_context);
  CheckRow row;
  row.model = &model;
  const uint64_t limit = model.max_context ? model.max_context : kMaxContextTokens;
  // GPU alone first; then GPU + RAM; streaming from SSD only when nothing fits in memory.
  Box in_memory = box;
  in_memory.ssd_bandwidth = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const FitKind kind = pass == 0 ? FitKind::Gpu : FitKind::Offload;
    if (kind == FitKind::Gpu && box.gpus.empty()) continue;
    if (pass == 2 && !box.ssd_bandwidth) continue;
    const Box& b = pass == 1 ? in_memory : box;
    for (const auto& [quant, bytes] : tiers) {
      s.quant = quant;
      const Estimate e = estimate(model, s);
      const Footprint f = make_footprint(model, e);
      const bool offload = kind == FitKind::Offload;
      if (!(offload ? fits_with_offload(f, b, o, s.context, s.sequences) : fits_on_devices(f, b, o, s.context, s.sequences))) continue;
      row.fit = kind;
      row.tier = e.weights.tier;
      row.quant = quant;
      row.weights_bytes = e.weights.bytes;
      row.total_bytes = e.total_bytes;
      row.max_context = solve_max_context(f, b, o, s.sequences, limit, offload);
      const Plan p = make_plan(model, s, b, o);
      row.decode_tok_s = p.decode.expected_tok_s;
      row.note = p.verdict;
      return row;
    }
  }
  row.note = "no tier fits this box, even with offload" + std::string(box.ssd_bandwidth ? "" : " (give --ssd-gbps to stream weights from disk)");
  return row;
}

std::vector<CheckRow> check_models(const std::vector<Model>& models, const Box& box, const PlanOptions& o, const Scenario& base) {
  std::vector<CheckRow> rows;
  for (const auto& m : models) rows.push_back(check_model(m, box, o, base));
  std::stable_sort(rows.begin(), rows.end(), [](const CheckRow& a, const CheckRow& b) {
    if (a.fit != b.fit) return static_cast<int>(a.fit) < static_cast<int>(b.fit);
    return a.decode_tok_s > b.decode_tok_s;
  });
  return rows;
}

}  // namespace vc
