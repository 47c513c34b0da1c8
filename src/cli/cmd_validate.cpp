// vramcalc validate [DIR] [--measured FILE]: recompute every reference case and every measured
// llama.cpp case, print the error table and a summary per figure (fitted and set-aside apart).
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "engines/validate.h"

namespace vc::cli {

Command add_validate(CLI::App& app) {
  auto* sub = app.add_subcommand("validate", "Compare our engine profiles with what llama.cpp and vLLM printed or allocated (reference cases in DIR, measured runs in --measured)");
  struct Opts {
    std::string dir;
    std::string measured;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("DIR", o->dir, "Reference folder holding llamacpp/runs.json and engine-logs/cases.json");
  sub->add_option("--measured", o->measured, "llama.cpp allocations measured by tools/measure-llamacpp (tests/data/llamacpp-measured.json)");
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            if (o->dir.empty() && o->measured.empty()) throw InputError("validate", "give a reference folder (DIR), --measured FILE, or both");
            std::vector<ValidationRow> rows;
            if (!o->dir.empty()) rows = validate_reference(o->dir);
            if (!o->measured.empty()) {
              auto more = validate_measured(o->measured);
              rows.insert(rows.end(), more.begin(), more.end());
            }
            if (o->json) {
              nlohmann::json out = nlohmann::json::array();
              for (const auto& r : rows) {
                out.push_back({{"case", r.case_id}, {"figure", r.figure}, {"printed", r.printed}, {"ours", r.ours}, {"error_percent", r.error_percent},
                               {"target_percent", r.target_percent}, {"met", r.met}, {"note", r.note}, {"part", r.part}});
              }
              fmt::print("{}\n", nlohmann::json{{"schema", "vramcalc.validate/1"}, {"rows", out}}.dump(2));
              return 0;
            }
            fmt::print("{:<42} {:<36} {:>16} {:>16} {:>8} {:>7}  {}\n", "case", "figure", "printed", "ours", "error%", "target", "note");
            struct Tally {
              int met = 0, total = 0;
              double worst = 0;
            };
            std::map<std::string, Tally> summary;  // figure [part] -> tally
            for (const auto& r : rows) {
              fmt::print("{:<42} {:<36} {:>16.0f} {:>16.0f} {:>8.3f} {:>6.1f}%  {}{}\n", r.case_id, r.figure, r.printed, r.ours, r.error_percent, r.target_percent,
                         r.met ? "" : "MISS ", r.note);
              auto& s = summary[r.part.empty() ? r.figure : r.figure + " [" + r.part + "]"];
              s.met += r.met ? 1 : 0;
              s.total += 1;
              if (std::fabs(r.error_percent) > std::fabs(s.worst)) s.worst = r.error_percent;
            }
            fmt::print("\nSummary per figure:\n");
            for (const auto& [figure, s] : summary) {
              fmt::print("  {:<58} {:>4} of {:<4} within target, worst {:+.2f}%\n", figure, s.met, s.total, s.worst);
            }
            return 0;
          }};
}

}  // namespace vc::cli
