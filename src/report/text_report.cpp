#include "report/text_report.h"

#include <fmt/format.h>

namespace vc {

std::string estimate_text(const Estimate& e, bool explain, ByteUnits units) {
  const Model& m = *e.model;
  const Scenario& s = e.scenario;
  std::string out;
  out += fmt::format("{} ({}): {} params, {} active; {} layers\n", m.name, m.id, m.params.total_text(), m.params.active_text(), m.layers.size());
  if (!m.weights_available()) out += fmt::format("Status: {} ({}); estimated from what the vendor said\n", status_text(m.status), m.status_note);
  if (explain) out += fmt::format("Active per token: {} ({})\n", m.params.active_parts_text(), kActiveConvention);
  out += fmt::format("Scenario: weights {}, context {} ({} tokens), {} sequence(s), cache {}, state {}, overhead {}\n\n", e.weights.tier,
                     format_tokens(s.context), format_count(s.context), s.sequences, s.cache_dtype, to_string(s.state_layout), format_percent_bp(s.overhead_bp));
  size_t width = 16;
  for (const auto& l : e.lines) width = std::max(width, l.label.size());
  for (const auto& l : e.lines) {
    out += fmt::format("  {:<{}}  {:>14}\n", l.label, width, format_bytes(l.bytes, units));
    if (explain) {
      out += fmt::format("      = {}\n      assumes: {}\n      source: {}\n", l.formula, l.assumption, l.source);
    }
  }
  out += fmt::format("  {}\n", std::string(width + 16, '-'));
  out += fmt::format("  {:<{}}  {:>14}\n", "Cache and state", width, format_bytes(e.context_bytes(), units));
  out += fmt::format("  {:<{}}  {:>14}\n", "Total", width, format_bytes(e.total_bytes, units));
  if (e.weights.clamped) {
    out += fmt::format("\nNote: {} would need {} for the weights, more than the native {} checkpoint; the native size stands.\n", e.weights.tier,
                       format_bytes(e.weights.unclamped, units), m.native.format);
  }
  out += "\nCards (aggregate, before sharding):";
  for (const auto& c : e.verdict.cards) out += fmt::format("  {} × {} GB", c.cards, c.card_bytes / 1'000'000'000);
  out += "\n\nVerdict: " + e.verdict.text + "\n";
  if (!m.warnings.empty()) {
    out += "\nWarnings:\n";
    for (const auto& w : m.warnings) out += "  - " + w + "\n";
  }
  return out;
}

}  // namespace vc
