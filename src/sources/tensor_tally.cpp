#include "sources/tensor_tally.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/checked.h"

namespace vc {

void TensorTally::add(ParamClass c, const std::string& dtype, uint64_t n_params, uint64_t n_bytes) {
  tensors = checked_add(tensors, 1);
  bytes = checked_add(bytes, n_bytes);
  params = checked_add(params, n_params);
  params_by_class[c] = checked_add(params_by_class[c], n_params);
  bytes_by_class[c] = checked_add(bytes_by_class[c], n_bytes);
  DtypeTally& d = by_dtype[dtype];
  d.tensors += 1;
  d.bytes = checked_add(d.bytes, n_bytes);
  d.params = checked_add(d.params, n_params);
}

std::pair<uint64_t, uint64_t> TensorTally::take(ParamClass c) {
  const auto p = params_by_class.find(c);
  const auto b = bytes_by_class.find(c);
  const std::pair<uint64_t, uint64_t> out{p == params_by_class.end() ? 0 : p->second, b == bytes_by_class.end() ? 0 : b->second};
  if (p != params_by_class.end()) params_by_class.erase(p);
  if (b != bytes_by_class.end()) bytes_by_class.erase(b);
  params -= out.first;
  bytes -= out.second;
  return out;
}

std::string TensorTally::dominant_dtype() const {
  std::string best;
  uint64_t most = 0;
  for (const auto& [name, d] : by_dtype) {
    if (best.empty() || d.bytes > most) {
      best = name;
      most = d.bytes;
    }
  }
  return best;
}

std::string TensorTally::dtype_summary() const {
  std::vector<std::pair<std::string, uint64_t>> rows;
  for (const auto& [name, d] : by_dtype) rows.emplace_back(name, d.bytes);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, b] : rows) {
    const double pct = bytes ? 100.0 * static_cast<double>(b) / static_cast<double>(bytes) : 0.0;
    out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : ", ", name, pct);
  }
  return out;
}

void TensorTally::write_params(Params& p, uint64_t experts, uint64_t experts_used, const std::string& source) const {
  p.by_class = params_by_class;
  p.derived_total = params;
  uint64_t active = 0;
  p.active_by_class.clear();
  for (const auto& [c, n] : params_by_class) {
    if (c == ParamClass::Embedding || c == ParamClass::Mtp || c == ParamClass::Vision) continue;
    const uint64_t a = c == ParamClass::RoutedExperts && experts > 0 ? mul_div_round(n, experts_used, experts) : n;
    p.active_by_class[c] = a;
    active = checked_add(active, a);
  }
  // A tied head is stored once as the embedding, yet decode reads all of it (kActiveConvention).
  if (!params_by_class.count(ParamClass::OutputHead) && params_by_class.count(ParamClass::Embedding)) {
    const uint64_t head = params_by_class.at(ParamClass::Embedding);
    p.active_by_class[ParamClass::OutputHead] = head;
    active = checked_add(active, head);
  }
  p.derived_active = active;
  p.derived_source = source;
}

}  // namespace vc
