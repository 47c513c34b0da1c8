// vramcalc builds MODEL: the build ladder with overhead and the cards each build needs.
#include <algorithm>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/hub_ladder.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_tiers.h"
#include "estimate/ladder.h"
#include "estimate/scenario_inputs.h"
#include "plan/engine_ladder.h"
#include "report/json_verbs.h"
#include "sources/resolver.h"

namespace vc::cli {
namespace {

// The engine's ladder: per tier, the fewest cards of each kind its per-device answer fits on.
int print_engine_builds(const Model& model, const Scenario& scenario, bool json) {
  const auto rows = engine_ladder(model, scenario, scenario.engine);
  if (json) {
    fmt::print("{}\n", engine_builds_json(model, scenario, rows).dump(2));
    return 0;
  }
  fmt::print("{} with {} at {} context x {} sequence{}: the fewest cards the engine's per-device answer fits on (tightest device's bytes).\n",
             model.name, to_string(scenario.engine), format_tokens(scenario.context), scenario.sequences, scenario.sequences == 1 ? "" : "s");
  fmt::print("Tiers: {}.\n", engine_tiers_text(scenario.engine));
  fmt::print("{:<18} {:>12}", "tier", "weights");
  for (const auto& card : kLadderCards) fmt::print("  {:>24}", card.label);
  fmt::print("\n");
  for (const auto& r : rows) {
    fmt::print("{:<18} {:>12}", r.weights.tier, format_bytes(r.weights.bytes));
    for (const auto& op : r.options) {
      const DeviceAllocation* t = op.answer ? op.answer->tightest() : nullptr;
      fmt::print("  {:>24}", t ? fmt::format("{} ({} each)", op.cards, format_bytes(t->total_bytes)) : fmt::format("over {}", kMaxLadderCards));
    }
    fmt::print("\n");
  }
  fmt::print("`vramcalc plan {} --quant TIER --gpu CARDS --engine {}` for the per-device lines.\n", model.id, to_string(scenario.engine));
  return 0;
}

}  // namespace

Command add_builds(CLI::App& app) {
  auto* sub = app.add_subcommand("builds", "Known builds of MODEL (quantized files) with overhead and the cards each needs");
  struct Opts {
    std::string model;
    std::string overhead = "15%";
    ScenarioInputs scenario;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id, or hf:ORG/REPO[@REV] for the repository's live ladder")->required();
  sub->add_option("--overhead", o->overhead, "Overhead on top of the file size")->capture_default_str();
  sub->add_option("--engine", o->scenario.engine,
                  "rule (the default: the ladder above with --overhead), or llamacpp|vllm|sglang: the tiers that engine loads and the fewest cards its "
                  "per-device answer fits on")
      ->capture_default_str();
  sub->add_option("--context", o->scenario.context, "Context per sequence the engine holds (with --engine)")->capture_default_str();
  sub->add_option("--seqs", o->scenario.seqs, "Concurrent sequences (with --engine)")->capture_default_str();
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            if (names_hub_repository(o->model) && o->scenario.engine != "rule") {
              throw InputError("--engine", "applies to catalogue models and files; a Hub repository's live ladder (hf:ORG/REPO) is weights plus --overhead only");
            }
            if (names_hub_repository(o->model)) return print_hub_ladder(o->model, parse_percent_bp(o->overhead, "--overhead"), o->overhead, o->json);
            Model model = resolve_model(o->model);
            const Scenario scenario = o->scenario.to_scenario();
            if (scenario.engine != EngineKind::Rule) return print_engine_builds(model, scenario, o->json);
            auto rows = build_ladder(model, parse_percent_bp(o->overhead, "--overhead"));
            if (o->json) {
              fmt::print("{}\n", builds_json(model, rows).dump(2));
              return 0;
            }
            fmt::print("Engine: rule (the default: weights plus --overhead; --engine llamacpp|vllm|sglang for the tiers an engine loads and the cards "
                       "its per-device answer fits on)\n");
            if (rows.empty()) {
              fmt::print("{} has no known builds in the catalogue.\n", model.name);
              return 0;
            }
            fmt::print("{} builds (weights + {} overhead; no cache):\n", model.name, o->overhead);
            // Build names run from "UD-IQ1_S" to "Qwen3-Coder-480B-A35B-Instruct-UD-Q2_K_XL": the column fits the longest.
            size_t name_width = 14;
            for (const auto& r : rows) name_width = std::max(name_width, r.build->name.size());
            fmt::print("{:<{}} {:>12} {:>6} {:>16}  {}\n", "build", name_width, "size", "bits", "with overhead", "cards");
            for (const auto& r : rows) {
              std::string cards;
              for (const auto& op : r.options) cards += fmt::format("{}{} × {}", cards.empty() ? "" : ", ", op.cards, op.label);
              fmt::print("{:<{}} {:>12} {:>6.2f} {:>16}  {}\n", r.build->name, name_width, format_bytes(r.build->bytes, ByteUnits::Decimal, 0),
                         r.bits_per_param, format_bytes(r.with_overhead, ByteUnits::Decimal, 0), cards);
            }
            return 0;
          }};
}

}  // namespace vc::cli
