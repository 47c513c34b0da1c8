// vramcalc models: the built-in catalogue; --audit sets our derived parameter counts beside the
// vendors' stated ones (the table in docs/accuracy.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "cli/commands.h"
#include "core/units.h"
#include "report/json_verbs.h"

namespace vc::cli {
namespace {

// Signed difference of derived against stated, in percent of stated ("+2.6%"), or "-" if unstated.
std::string difference(uint64_t derived, const std::optional<StatedFigure>& stated) {
  if (!stated || stated->value == 0) return "-";
  const double pct = (static_cast<double>(derived) - static_cast<double>(stated->value)) * 100.0 / static_cast<double>(stated->value);
  return fmt::format("{:+.1f}%", pct);
}

std::string stated_text(const std::optional<StatedFigure>& f) { return f ? format_params(f->value) : "-"; }

void print_audit(const std::vector<Model>& models) {
  fmt::print("| id | derived total | vendor total | diff | derived active | vendor active | diff | why they differ |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const auto& m : models) {
    const Params& p = m.params;
    std::string why = p.difference_note;
    if (!p.stated_convention.empty()) why += (why.empty() ? "" : " ") + p.stated_convention;
    fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} |\n", m.id, format_params(p.derived_total), stated_text(p.stated_total),
               difference(p.derived_total, p.stated_total), format_params(p.derived_active), stated_text(p.stated_active),
               difference(p.derived_active, p.stated_active), why.empty() ? "-" : why);
  }
}

}  // namespace

Command add_models(CLI::App& app) {
  auto* sub = app.add_subcommand("models", "List the built-in catalogue");
  auto json = std::make_shared<bool>(false);
  auto audit = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON");
  sub->add_flag("--audit", *audit, "Derived vs vendor-stated parameters for every entry (a Markdown table)");
  return {sub, [json, audit] {
            const auto& models = Catalogue::builtin().models();
            if (*json) {
              fmt::print("{}\n", models_json(models).dump(2));
              return 0;
            }
            if (*audit) {
              print_audit(models);
              return 0;
            }
            fmt::print("{:<30} {:<32} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>10}  {:<8} {}\n", "id", "name", "params", "vendor", "active", "vendor",
                       "layers", "context", "native", "format", "status");
            for (const auto& m : models) {
              fmt::print("{:<30} {:<32} {:>8} {:>8} {:>8} {:>8} {:>6} {:>8} {:>10}  {:<8} {}\n", m.id, m.name, format_params(m.params.total()),
                         stated_text(m.params.stated_total), format_params(m.params.active()), stated_text(m.params.stated_active), m.layers.size(),
                         format_tokens(m.max_context), format_bytes(m.native.bytes, ByteUnits::Decimal, 1), m.native.format,
                         m.weights_available() ? "released" : status_text(m.status));
            }
            fmt::print("\nparams: derived from each published config (the figure every estimate uses); vendor: the vendor's stated figure.\n"
                       "active: {}.\n", kActiveConvention);
            return 0;
          }};
}

}  // namespace vc::cli
