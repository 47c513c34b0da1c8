// vramcalc builds MODEL: the build ladder with overhead and the cards each build needs.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/hub_ladder.h"
#include "core/units.h"
#include "estimate/ladder.h"
#include "report/json_verbs.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_builds(CLI::App& app) {
  auto* sub = app.add_subcommand("builds", "Known builds of MODEL (quantized files) with overhead and the cards each needs");
  struct Opts {
    std::string model;
    std::string overhead = "15%";
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id, or hf:ORG/REPO[@REV] for the repository's live ladder")->required();
  sub->add_option("--overhead", o->overhead, "Overhead on top of the file size")->capture_default_str();
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            if (names_hub_repository(o->model)) return print_hub_ladder(o->model, parse_percent_bp(o->overhead, "--overhead"), o->overhead, o->json);
            Model model = resolve_model(o->model);
            auto rows = build_ladder(model, parse_percent_bp(o->overhead, "--overhead"));
            if (o->json) {
              fmt::print("{}\n", builds_json(model, rows).dump(2));
              return 0;
            }
            if (rows.empty()) {
              fmt::print("{} has no known builds in the catalogue.\n", model.name);
              return 0;
            }
            fmt::print("{} builds (weights + {} overhead; no cache):\n", model.name, o->overhead);
            fmt::print("{:<14} {:>12} {:>6} {:>16}  {}\n", "build", "size", "bits", "with overhead", "cards");
            for (const auto& r : rows) {
              std::string cards;
              for (const auto& op : r.options) cards += fmt::format("{}{} × {}", cards.empty() ? "" : ", ", op.cards, op.label);
              fmt::print("{:<14} {:>12} {:>6.2f} {:>16}  {}\n", r.build->name, format_bytes(r.build->bytes, ByteUnits::Decimal, 0), r.bits_per_param,
                         format_bytes(r.with_overhead, ByteUnits::Decimal, 0), cards);
            }
            return 0;
          }};
}

}  // namespace vc::cli
