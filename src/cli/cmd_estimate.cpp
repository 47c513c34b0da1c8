// vramcalc estimate MODEL: the breakdown, the totals and the verdict.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/scenario_flags.h"
#include "estimate/estimate.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_estimate(CLI::App& app) {
  auto* sub = app.add_subcommand("estimate", "Memory to run MODEL: weights, cache, recurrent state, overhead, total and a verdict");
  struct Opts {
    std::string model;
    ScenarioFlags flags;
    bool json = false;
    bool explain = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id (see `vramcalc models`) or a config.json / model directory")->required();
  o->flags.add_to(*sub);
  sub->add_flag("--json", o->json, "Print the documented JSON (docs/json.md)");
  sub->add_flag("--explain", o->explain, "Show each line's formula, assumption and source");
  return {sub, [o] {
            Model model = resolve_model(o->model);
            Estimate e = estimate(model, o->flags.to_scenario());
            if (o->json) fmt::print("{}\n", estimate_json(e).dump(2));
            else fmt::print("{}", estimate_text(e, o->explain, o->flags.byte_units()));
            return 0;
          }};
}

}  // namespace vc::cli
