// vramcalc sweep MODEL --contexts 8K,32K,1M: one row per context, and the saving between rows.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/scenario_flags.h"
#include "estimate/sweep.h"
#include "report/json_verbs.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_sweep(CLI::App& app) {
  auto* sub = app.add_subcommand("sweep", "Estimate MODEL at several contexts, with the saving between rows");
  struct Opts {
    std::string model;
    std::vector<std::string> contexts{"8K", "32K", "128K", "1M"};
    ScenarioFlags flags;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id or config.json")->required();
  sub->add_option("--contexts", o->contexts, "Comma-separated contexts, e.g. 8K,32K,1M")->delimiter(',');
  o->flags.add_to(*sub, false);
  sub->add_option("--engine", o->flags.engine, std::string("Whose allocations each row also gets: ") + kEngineNames)->capture_default_str();
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            Model model = resolve_model(o->model);
            std::vector<uint64_t> contexts;
            for (const auto& c : o->contexts) contexts.push_back(parse_tokens(c, "--contexts"));
            const Scenario base = o->flags.to_scenario();
            auto rows = sweep(model, base, contexts);
            const ByteUnits units = o->flags.byte_units();
            if (o->json) {
              fmt::print("{}\n", sweep_json(model, rows).dump(2));
              return 0;
            }
            fmt::print("{} ({}), weights {}, engine {}\n", model.name, model.id, rows.front().estimate.weights.tier, to_string(base.engine));
            fmt::print("{:>10} {:>14} {:>14} {:>14} {:>14} {:>16} {:>14}\n", "context", "cache+state", "weights", "overhead", "total", "saving vs prev", "engine total");
            for (const auto& r : rows) {
              const auto& e = r.estimate;
              std::string saving = r.saving_vs_previous == 0 && &r == &rows.front() ? "" :
                  (r.saving_vs_previous >= 0 ? format_bytes(static_cast<uint64_t>(r.saving_vs_previous), units)
                                             : "-" + format_bytes(static_cast<uint64_t>(-r.saving_vs_previous), units));
              fmt::print("{:>10} {:>14} {:>14} {:>14} {:>14} {:>16} {:>14}\n", format_tokens(e.scenario.context), format_bytes(e.context_bytes(), units),
                         format_bytes(e.weights.bytes, units), format_bytes(e.overhead_bytes, units), format_bytes(e.total_bytes, units), saving,
                         format_bytes(r.engine.total_bytes, units));
            }
            return 0;
          }};
}

}  // namespace vc::cli
