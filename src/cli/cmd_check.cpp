// vramcalc check: which catalogue models this box runs, at what tier, context and speed.
#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "catalogue/catalogue.h"
#include "cli/box_flags.h"
#include "cli/commands.h"
#include "cli/scenario_flags.h"
#include "core/units.h"
#include "engines/engine_tiers.h"
#include "engines/sglang_lora_adapters.h"
#include "plan/check.h"
#include "plan/detect.h"
#include "report/json_plan.h"

namespace vc::cli {

Command add_check(CLI::App& app) {
  auto* sub = app.add_subcommand("check", "For every catalogue model: the best tier this box runs, the largest context and decode tok/s");
  struct Opts {
    BoxFlags box;
    ScenarioFlags flags;
    std::string prefer = "quality";
    bool detect = false;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_flag("--detect", o->detect, "Read this machine: nvidia-smi, Apple silicon (sysctl), AMD sysfs (Strix Halo: VRAM + GTT), /proc/meminfo, CPU count (--gpu and --ram then add nothing)");
  sub->add_option("--prefer", o->prefer,
                  "Which fitting tier wins: quality (largest), speed (fastest), balanced (largest on the GPUs alone, fastest with offload)")
      ->capture_default_str();
  o->box.add_to(*sub, true);
  o->flags.add_to(*sub);
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o, sub] {
            Box box;
            std::vector<std::string> found;
            if (o->detect) {
              Detected d = detect();
              apply_detected_gpu_shares(d, o->box.gpu_wired_limit, "--gpu-wired-limit");
              box = d.box;
              found = d.found;
              const Box given = o->box.to_box();  // bandwidths and SSD still come from the flags
              box.ram_bandwidth = given.ram_bandwidth;
              box.ssd_bandwidth = given.ssd_bandwidth;
              box.nodes = given.nodes;
            } else {
              box = o->box.to_box();
            }
            PlanOptions opts = o->box.to_options();
            read_command_lora_adapters(opts.command, AdapterReads::AnyPath);  // SGLang's --lora-paths: rank and modules
            Scenario base = o->flags.to_scenario();
            o->box.apply_command(base, ScenarioFlags::given(*sub));  // as plan: a pasted command's context, sequences, cache dtype
            const auto rows = check_models(Catalogue::builtin().models(), box, opts, base, parse_check_preference(o->prefer, "--prefer"));
            if (o->json) {
              fmt::print("{}\n", check_json(box, found, rows, opts.engine).dump(2));
              return 0;
            }
            for (const auto& f : found) fmt::print("found: {}\n", f);
            fmt::print("Box: {}, RAM {}{}\nEngine: {}{}\n", box.describe(), format_bytes(box.ram_bytes), box.ssd_bandwidth ? ", SSD streaming allowed" : "",
                       to_string(opts.engine), opts.engine == EngineKind::Rule ? " (the default percentage rule; --engine llamacpp|vllm|sglang)" : "");
            fmt::print("{}", gpu_share_lines(box));
            if (base.quant.empty()) fmt::print("Tiers: {}.\n\n", engine_tiers_text(opts.engine));
            else fmt::print("Tiers: {} only ({}).\n\n", base.quant, ScenarioFlags::given(*sub).quant ? "--quant" : "the tier the pasted command's model file names");
            // Columns as wide as their longest entry: build names ("build Qwen3.5-35B-A3B-Q4_K_M") and
            // fits ("unreleased") are longer than the headings.
            std::size_t model_width = 5, fit_width = 3, tier_width = 4;
            for (const auto& r : rows) {
              model_width = std::max(model_width, r.model->id.size());
              fit_width = std::max(fit_width, std::string(to_string(r.fit)).size());
              tier_width = std::max(tier_width, r.tier.size());
            }
            const auto print_row = [&](std::string_view model, std::string_view fit, std::string_view tier, std::string_view weights,
                                       std::string_view total, std::string_view context, std::string_view speed) {
              fmt::print("{:<{}}  {:<{}}  {:<{}}  {:>10}  {:>10}  {:>11}  {:>21}\n", model, model_width, fit, fit_width, tier, tier_width, weights,
                         total, context, speed);
            };
            print_row("model", "fit", "tier", "weights", "total", "max context", "tok/s");
            for (const auto& r : rows) {
              print_row(r.model->id, to_string(r.fit), r.tier.empty() ? "-" : r.tier, r.weights_bytes ? format_bytes(r.weights_bytes) : "-",
                        r.total_bytes ? format_bytes(r.total_bytes) : "-", r.max_context ? format_tokens(r.max_context) : "-",
                        decode_cell(r));
            }
            for (const auto& r : rows) {
              if (r.fit == FitKind::Unavailable) fmt::print("\n{}: {}", r.model->id, r.note);
            }
            fmt::print("\n\nContext checked: {} per sequence; tok/s are estimates with the range measured runs show in brackets (the rule: at the --efficiency factor, its range wide; an engine: its placement, a narrower range). `vramcalc plan MODEL` for the full plan.\n", o->flags.context);
            return 0;
          }};
}

}  // namespace vc::cli
