// vramcalc compare A B: two models (or one model in two scenarios) side by side.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "report/engine_report.h"
#include "cli/scenario_flags.h"
#include "estimate/estimate.h"
#include "report/json_verbs.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_compare(CLI::App& app) {
  auto* sub = app.add_subcommand("compare", "Two models, or one model in two scenarios (--b-* flags), side by side");
  struct Opts {
    std::string a, b;
    ScenarioFlags flags;
    std::string b_quant, b_context, b_seqs, b_cache_dtype;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("A", o->a, "First model")->required();
  sub->add_option("B", o->b, "Second model (default: the first, for a scenario comparison)");
  o->flags.add_to(*sub);
  sub->add_option("--b-quant", o->b_quant, "Weights tier for B");
  sub->add_option("--b-context", o->b_context, "Context for B");
  sub->add_option("--b-seqs", o->b_seqs, "Concurrent sequences for B");
  sub->add_option("--b-cache-dtype", o->b_cache_dtype, "Cache dtype for B");
  sub->add_option("--engine", o->flags.engine, std::string("Whose allocations each side also gets: ") + kEngineNames)->capture_default_str();
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            Model ma = resolve_model(o->a, "A");
            Model mb = resolve_model(o->b.empty() ? o->a : o->b, "B");
            Scenario sa = o->flags.to_scenario();
            Scenario sb = sa;
            if (!o->b_quant.empty()) sb.quant = o->b_quant;
            if (!o->b_context.empty()) sb.context = parse_tokens(o->b_context, "--b-context");
            if (!o->b_seqs.empty()) sb.sequences = parse_count(o->b_seqs, "--b-seqs", 1, kMaxSequences);
            if (!o->b_cache_dtype.empty()) sb.cache_dtype = o->b_cache_dtype;
            Estimate ea = estimate(ma, sa);
            Estimate eb = estimate(mb, sb);
            const ByteUnits units = o->flags.byte_units();
            if (o->json) {
              fmt::print("{}\n", compare_json(ea, eb, engine_for(ma, sa), engine_for(mb, sb)).dump(2));
              return 0;
            }
            auto col = [&](const Estimate& e) { return fmt::format("{} @ {}", e.model->id, format_tokens(e.scenario.context)); };
            fmt::print("{:<22} {:>24} {:>24}\n", "", col(ea), col(eb));
            fmt::print("{:<22} {:>24} {:>24}\n", "weights tier", ea.weights.tier, eb.weights.tier);
            auto row = [&](const char* label, uint64_t x, uint64_t y) {
              fmt::print("{:<22} {:>24} {:>24}\n", label, format_bytes(x, units), format_bytes(y, units));
            };
            row("weights", ea.weights.bytes, eb.weights.bytes);
            row("cache", ea.cache_bytes, eb.cache_bytes);
            row("recurrent state", ea.state_bytes, eb.state_bytes);
            row("overhead", ea.overhead_bytes, eb.overhead_bytes);
            row("total", ea.total_bytes, eb.total_bytes);
            int64_t diff = static_cast<int64_t>(eb.total_bytes) - static_cast<int64_t>(ea.total_bytes);
            fmt::print("\nB {} A by {}.\n", diff >= 0 ? "exceeds" : "is under", format_bytes(static_cast<uint64_t>(diff >= 0 ? diff : -diff), units));
            if (sa.engine != EngineKind::Rule) {
              fmt::print("\nA: {}", engine_text(engine_for(ma, sa), false, units));
              fmt::print("\nB: {}", engine_text(engine_for(mb, sb), false, units));
            }
            return 0;
          }};
}

}  // namespace vc::cli
