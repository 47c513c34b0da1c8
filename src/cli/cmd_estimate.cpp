// vramcalc estimate MODEL: the breakdown, the totals and the verdict, and what the chosen engine
// allocates per device (engines/engine.h; the same answer /api/estimate gives).
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/extras_flags.h"
#include "cli/input_options.h"
#include "cli/scenario_flags.h"
#include "core/error.h"
#include "engines/engine.h"
#include "engines/sglang_lora_adapters.h"
#include "estimate/estimate.h"
#include "report/engine_report.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_estimate(CLI::App& app) {
  auto* sub = app.add_subcommand("estimate", "Memory to run MODEL: weights, cache, recurrent state, overhead, total, a verdict, and what an engine allocates per device");
  struct Opts {
    std::string model;
    ScenarioFlags flags;
    bool json = false;
    bool explain = false;
    EngineInputs engine;
    ExtrasFlags extras;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id (see `vramcalc models`) or a config.json / model directory");
  add_input_options<EngineInputs>(*sub, o->engine, EngineInputs::fields());
  o->flags.add_to(*sub);
  o->extras.add_to(*sub);
  sub->add_flag("--json", o->json, "Print the documented JSON (docs/json.md)");
  sub->add_flag("--explain", o->explain, "Show each line's formula, assumption and source");
  return {sub, [o, sub] {
            const std::string spec = o->model.empty() ? command_model(o->engine) : o->model;
            if (spec.empty()) throw InputError("MODEL", "is required (or a command that names the model)");
            const Model model = resolve_model(spec);
            EngineRequest request = engine_request(model, o->flags.to_scenario(), o->engine, ScenarioFlags::given(*sub));
            read_command_lora_adapters(request.command, AdapterReads::AnyPath);  // SGLang's --lora-paths: rank and modules
            if (!o->engine.command.empty()) o->extras.fill_from_command(o->engine.command);
            o->extras.take_speculative_draft();
            const Extras extras = load_extras(o->extras, spec, request);  // image tokens grow the context
            const Estimate e = estimate(model, request.scenario);
            const EngineAnswer answer = run_engine(request);
            if (o->json) {
              auto j = estimate_json(e, answer);
              if (!extras.lines.empty()) j["components"] = components_json(extras, e.total_bytes);
              fmt::print("{}\n", j.dump(2));
              return 0;
            }
            fmt::print("{}", estimate_text(e, o->explain, o->flags.byte_units()));
            if (!extras.lines.empty()) fmt::print("{}", components_text(extras, e.total_bytes, o->explain, o->flags.byte_units()));
            if (answer.engine != EngineKind::Rule || request.box) fmt::print("\n{}", engine_text(answer, o->explain, o->flags.byte_units()));
            else fmt::print("\nEngine: rule (the default; --engine llamacpp|vllm|sglang for what an engine allocates per device)\n");
            return 0;
          }};
}

}  // namespace vc::cli
