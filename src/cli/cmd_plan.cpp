// vramcalc plan MODEL --gpu H200x8: the estimate placed on real devices, per device, with offload,
// speeds, solvers and the engine command.
#include <fmt/format.h>

#include "cli/box_flags.h"
#include "cli/commands.h"
#include "cli/scenario_flags.h"
#include "engines/sglang_lora_adapters.h"
#include "plan/plan_report.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_plan(CLI::App& app) {
  auto* sub = app.add_subcommand("plan", "Place MODEL on real GPUs: per-device shards, offload tiers, tok/s, solvers and the engine command");
  struct Opts {
    std::string model;
    ScenarioFlags flags;
    BoxFlags box;
    bool json = false;
    bool explain = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id or a config.json / model directory")->required();
  o->flags.add_to(*sub);
  o->box.add_to(*sub);
  sub->add_flag("--json", o->json, "Print JSON (schema vramcalc.plan/1)");
  sub->add_flag("--explain", o->explain, "Show formulas, assumptions and sources");
  return {sub, [o, sub] {
            Model model = resolve_model(o->model);
            PlanOptions options = o->box.to_options();
            read_command_lora_adapters(options.command, AdapterReads::AnyPath);  // SGLang's --lora-paths: rank and modules
            Scenario scenario = o->flags.to_scenario();
            o->box.apply_command(scenario, ScenarioFlags::given(*sub));  // a pasted command's context, sequences, cache dtype
            Plan p = make_plan(model, scenario, o->box.to_box(), options);
            PlanSolved solved = solve(p);
            if (o->json) fmt::print("{}\n", plan_json(p, solved).dump(2));
            else fmt::print("{}", plan_text(p, solved, o->explain, o->flags.byte_units()));
            return 0;
          }};
}

}  // namespace vc::cli
