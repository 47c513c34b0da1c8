// vramcalc validate DIR: recompute every reference case and print the error table.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "engines/validate.h"

namespace vc::cli {

Command add_validate(CLI::App& app) {
  auto* sub = app.add_subcommand("validate", "Compare our engine profiles with what llama.cpp and vLLM printed (reference cases in DIR)");
  struct Opts {
    std::string dir;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("DIR", o->dir, "Reference folder holding llamacpp/runs.json and engine-logs/cases.json")->required();
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            auto rows = validate_reference(o->dir);
            if (o->json) {
              nlohmann::json out = nlohmann::json::array();
              for (const auto& r : rows) {
                out.push_back({{"case", r.case_id}, {"figure", r.figure}, {"printed", r.printed}, {"ours", r.ours}, {"error_percent", r.error_percent},
                               {"target_percent", r.target_percent}, {"met", r.met}, {"note", r.note}});
              }
              fmt::print("{}\n", nlohmann::json{{"schema", "vramcalc.validate/1"}, {"rows", out}}.dump(2));
              return 0;
            }
            fmt::print("{:<42} {:<36} {:>16} {:>16} {:>8} {:>7}  {}\n", "case", "figure", "printed", "ours", "error%", "target", "note");
            std::map<std::string, std::pair<int, int>> summary;  // figure -> met, total
            for (const auto& r : rows) {
              fmt::print("{:<42} {:<36} {:>16.0f} {:>16.0f} {:>8.3f} {:>6.1f}%  {}{}\n", r.case_id, r.figure, r.printed, r.ours, r.error_percent, r.target_percent,
                         r.met ? "" : "MISS ", r.note);
              auto& s = summary[r.figure];
              s.first += r.met ? 1 : 0;
              s.second += 1;
            }
            fmt::print("\nSummary per figure:\n");
            for (const auto& [figure, s] : summary) fmt::print("  {:<40} {} of {} within target\n", figure, s.first, s.second);
            return 0;
          }};
}

}  // namespace vc::cli
