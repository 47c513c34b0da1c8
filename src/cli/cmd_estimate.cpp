// vramcalc estimate MODEL: the breakdown, the totals and the verdict.
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/extras_flags.h"
#include "cli/scenario_flags.h"
#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_run.h"
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
    std::string engine = "generic";
    std::string engine_command;
    std::string gpu_memory;
    ExtrasFlags extras;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id (see `vramcalc models`) or a config.json / model directory");
  sub->add_option("--engine", o->engine, "generic (default), llamacpp or vllm: add what that engine allocates (docs/engines.md)")->capture_default_str();
  sub->add_option("--engine-command", o->engine_command, "Paste the command you run: \"llama-server -m m.gguf -c 32768 -ngl 99\" or \"vllm serve ORG/REPO ...\"");
  sub->add_option("--gpu-memory", o->gpu_memory, "Card memory for vLLM's budget, e.g. 80GB or 79.19GiB");
  o->flags.add_to(*sub);
  o->extras.add_to(*sub);
  sub->add_flag("--json", o->json, "Print the documented JSON (docs/json.md)");
  sub->add_flag("--explain", o->explain, "Show each line's formula, assumption and source");
  return {sub, [o, sub] {
            EngineRun run;
            if (!o->engine_command.empty()) run = parse_engine_command(o->engine_command);
            else if (o->engine == "llamacpp" || o->engine == "vllm") run.engine = o->engine;
            else if (o->engine != "generic") throw InputError("--engine", "'" + o->engine + "' is not known; accepted: generic, llamacpp, vllm");
            std::string spec = o->model.empty() ? run.model : o->model;
            if (spec.empty()) throw InputError("MODEL", "is required (or a command that names the model)");
            Model model = resolve_model(spec);
            Scenario sc = o->flags.to_scenario();
            sc.engine = run.engine;
            // A pasted command sets the scenario too, unless a flag says otherwise.
            if (!o->engine_command.empty() && run.engine == "llamacpp") {
              if (sub->count("--context") == 0) sc.context = std::max<uint64_t>(1, run.llamacpp.n_ctx / run.llamacpp.n_seq);
              if (sub->count("--seqs") == 0) sc.sequences = run.llamacpp.n_seq;
              if (sub->count("--cache-dtype") == 0) sc.cache_dtype = run.llamacpp.type_k;
            }
            if (!o->engine_command.empty() && run.engine == "vllm" && sub->count("--context") == 0) sc.context = run.vllm.kv.max_model_len;
            if (o->engine_command.empty() && run.engine == "llamacpp") {  // the scenario in llama.cpp's terms
              run.llamacpp.n_ctx = checked_mul(sc.context, sc.sequences);
              run.llamacpp.n_seq = sc.sequences;
              run.llamacpp.type_k = run.llamacpp.type_v = sc.cache_dtype;
              run.placement.n_gpu_layers = 1u << 20;
            }
            if (o->engine_command.empty() && run.engine == "vllm") run.vllm.kv.max_model_len = sc.context;
            if (!o->gpu_memory.empty()) run.vllm.card_bytes = parse_bytes(o->gpu_memory, "--gpu-memory");
            if (!o->engine_command.empty()) o->extras.fill_from_command(o->engine_command);
            const Extras extras = load_extras(o->extras, spec, sc);  // image tokens grow sc.context
            if (extras.image_tokens > 0) {
              run.llamacpp.n_ctx = checked_mul(sc.context, run.llamacpp.n_seq);
              run.vllm.kv.max_model_len = sc.context;
            }
            Estimate e = estimate(model, sc);
            std::vector<Line> lines = run.engine == "generic" ? std::vector<Line>{} : engine_lines(model, e.weights.bytes, run);
            if (o->json) {
              auto j = estimate_json(e);
              if (run.engine != "generic") {
                nlohmann::json el = nlohmann::json::array();
                for (const auto& l : lines) el.push_back({{"id", l.id}, {"label", l.label}, {"bytes", l.bytes}, {"formula", l.formula}, {"assumption", l.assumption}});
                j["engine"] = {{"name", run.engine}, {"lines", el}, {"notes", run.notes}};
              }
              if (!extras.lines.empty()) j["components"] = components_json(extras);
              fmt::print("{}\n", j.dump(2));
              return 0;
            }
            fmt::print("{}", estimate_text(e, o->explain, o->flags.byte_units()));
            if (run.engine != "generic") {
              fmt::print("\nWhat {} allocates:\n", run.engine == "llamacpp" ? "llama.cpp" : "vLLM");
              for (const auto& l : lines) {
                fmt::print("  {:<70} {:>14}\n", l.label, format_bytes(l.bytes, o->flags.byte_units()));
                if (o->explain) fmt::print("      = {} B: {}{}{}\n", format_count(l.bytes), l.formula, l.assumption.empty() ? "" : "; ", l.assumption);
              }
              for (const auto& n : run.notes) fmt::print("  note: {}\n", n);
            }
            if (!extras.lines.empty()) fmt::print("{}", components_text(extras, e.total_bytes, o->explain, o->flags.byte_units()));
            return 0;
          }};
}

}  // namespace vc::cli
