// vramcalc validate [PATH] [--measured FILE] [--log FILE]: recompute every reference case, every
// measured llama.cpp case and every public engine log, print the error table and a summary per
// figure (fitted and set-aside apart). PATH is a reference folder (llamacpp/runs.json,
// engine-logs/cases.json) or an engine-logs JSON file (tests/data/engine-logs.json); --log puts
// our figures beside those of one pasted vLLM, SGLang or llama.cpp start-up log.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_log.h"
#include "engines/validate.h"
#include "plan/plan.h"
#include "report/json_validate_log.h"
#include "speed/speed_validate.h"

namespace vc::cli {
namespace {

int validate_log(const std::string& file, const std::string& model_spec, const std::string& gpu_memory, bool json) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError("--log", "cannot open '" + file + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  EngineLog log = parse_engine_log(ss.str());
  Model model = log_model(log, model_spec);
  std::optional<uint64_t> card;
  if (!gpu_memory.empty()) card = parse_bytes(gpu_memory, "--gpu-memory");
  auto rows = compare_engine_log(log, model, card);
  if (json) {
    fmt::print("{}\n", validate_log_json(log, model, rows).dump(2));
    return 0;
  }
  fmt::print("{} log, model {}\n", log.engine, model.id.empty() ? model.name : model.id);
  fmt::print("{:<46} {:>16} {:>16} {:>8}\n", "figure", "printed", "vramcalc", "error%");
  for (const auto& r : rows) {
    if (!r.computed) fmt::print("{:<46} {}\n", r.figure, r.note);
    else fmt::print("{:<46} {:>16.6g} {:>16.6g} {:>8.2f}\n", r.figure, r.printed, r.ours, r.error_percent);
  }
  for (const auto& n : log.notes) fmt::print("note: {}\n", n);
  return 0;
}

int validate_speed_file(const std::string& file, bool json) {
  const auto rows = validate_speed(file);
  const auto summary = summarize_speed(rows);
  const PlanOptions rule;  // the rule at its default --efficiency and --compute-efficiency
  const double decode_efficiency = rule.efficiency_bp / 10000.0, prefill_efficiency = rule.compute_efficiency_bp / 10000.0;
  const auto rule_summary = summarize_rule_speed(rows, decode_efficiency, prefill_efficiency);
  const auto summary_json = [](const std::vector<SpeedSummary>& table) {
    nlohmann::json sum = nlohmann::json::array();
    for (const auto& s : table)
      sum.push_back({{"group", s.group}, {"part", s.part}, {"cases", s.cases}, {"met", s.met}, {"inside_range", s.inside_range}, {"median_ratio", s.median_ratio},
                     {"target", {s.low, s.high}}});
    return sum;
  };
  const auto print_summary = [](const std::vector<SpeedSummary>& table) {
    fmt::print("| group | part | cases | within band | inside the printed range | median ratio | band |\n|---|---|---:|---:|---:|---:|---|\n");
    const auto percent = [](std::size_t n, std::size_t of) { return of ? 100.0 * static_cast<double>(n) / static_cast<double>(of) : 0.0; };
    for (const auto& s : table) {
      fmt::print("| {} | {} | {} | {} ({:.0f}%) | {} ({:.0f}%) | {:.2f} | {:.2f}-{:.2f} |\n", s.group, s.part, s.cases, s.met, percent(s.met, s.cases), s.inside_range,
                 percent(s.inside_range, s.cases), s.median_ratio, s.low, s.high);
    }
  };
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
      out.push_back({{"id", r.id}, {"group", r.group}, {"part", r.part}, {"setup", r.setup}, {"measured_tok_s", r.measured}, {"estimate_tok_s", r.estimate},
                     {"ratio", r.ratio}, {"met", r.met}, {"bound_tok_s", r.bound}, {"bound_share", r.bound_share}, {"note", r.note}, {"reads", r.reads}});
    fmt::print("{}\n", nlohmann::json{{"schema", "vramcalc.validate-speed/1"}, {"rows", out}, {"summary", summary_json(summary)},
                                      {"rule_summary", summary_json(rule_summary)},
                                      {"rule_efficiency", {{"decode", decode_efficiency}, {"prefill", prefill_efficiency}}}}
                               .dump(2));
    return 0;
  }
  fmt::print("{:<52} {:<17} {:<9} {:>10} {:>10} {:>7}\n", "case", "group", "part", "measured", "estimate", "ratio");
  for (const auto& r : rows) {
    if (r.estimate <= 0) {
      fmt::print("{:<52} {:<17} {:<9} {:>10.2f} {:>10} {:>7}  {}\n", r.id, r.group, r.part, r.measured, "-", "-", r.note);
      continue;
    }
    fmt::print("{:<52} {:<17} {:<9} {:>10.2f} {:>10.2f} {:>7.2f}{}\n", r.id, r.group, r.part, r.measured, r.estimate, r.ratio, r.met ? "" : "  (outside the band)");
  }
  fmt::print("\nSpeed, measured / estimate (target band per group):\n");
  print_summary(summary);
  fmt::print("\nThe rule engine (no --engine) at --efficiency {:.0f}% and --compute-efficiency {:.0f}%, measured / its estimate, on the same runs:\n",
             decode_efficiency * 100, prefill_efficiency * 100);
  print_summary(rule_summary);
  return 0;
}

}  // namespace

Command add_validate(CLI::App& app) {
  auto* sub = app.add_subcommand("validate", "Compare our engine profiles with what llama.cpp, vLLM and SGLang printed or allocated (reference cases, measured runs, public logs, a pasted log)");
  struct Opts {
    std::string path;
    std::string measured;
    std::string log;
    std::string model;
    std::string gpu_memory;
    std::string speed;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("PATH", o->path, "A reference folder (llamacpp/runs.json, engine-logs/cases.json) or an engine-logs JSON file (tests/data/engine-logs.json)");
  sub->add_option("--measured", o->measured, "llama.cpp allocations measured by tools/measure-llamacpp (tests/data/llamacpp-measured.json)");
  sub->add_option("--log", o->log, "A start-up log of vLLM, SGLang or llama.cpp: its settings are read and our figures printed beside its own");
  sub->add_option("--model", o->model, "With --log: the model (catalogue id, config.json, .gguf, hf:ORG/REPO) when the log does not name it");
  sub->add_option("--gpu-memory", o->gpu_memory, "With --log: the card's memory when the log does not print it, e.g. 80GB or 79.19GiB");
  sub->add_option("--speed", o->speed, "Published decode and prefill speeds (tests/data/speed-measurements.json): our estimate beside each, fitted and set-aside apart");
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            if (!o->log.empty()) return validate_log(o->log, o->model, o->gpu_memory, o->json);
            if (!o->speed.empty()) return validate_speed_file(o->speed, o->json);
            if (o->path.empty() && o->measured.empty())
              throw InputError("validate", "give a reference folder or engine-logs JSON file (PATH), --measured FILE, or --log FILE");
            std::vector<ValidationRow> rows;
            if (!o->path.empty()) rows = std::filesystem::is_regular_file(o->path) ? validate_engine_logs(o->path) : validate_reference(o->path);
            if (!o->measured.empty()) {
              auto more = validate_measured(o->measured);
              rows.insert(rows.end(), more.begin(), more.end());
            }
            if (o->json) {
              nlohmann::json out = nlohmann::json::array();
              for (const auto& r : rows) {
                out.push_back({{"case", r.case_id}, {"figure", r.figure}, {"printed", r.printed}, {"ours", r.ours}, {"error_percent", r.error_percent},
                               {"target_percent", r.target_percent}, {"met", r.met}, {"note", r.note}, {"part", r.part}, {"computed", r.computed}});
              }
              fmt::print("{}\n", nlohmann::json{{"schema", "vramcalc.validate/1"}, {"rows", out}}.dump(2));
              return 0;
            }
            fmt::print("{:<42} {:<36} {:>16} {:>16} {:>8} {:>7}  {}\n", "case", "figure", "printed", "ours", "error%", "target", "note");
            struct Tally {
              int met = 0, total = 0;
              double worst = 0;
              std::vector<double> errors;
              double median() {  // of |error|
                if (errors.empty()) return 0;
                std::sort(errors.begin(), errors.end());
                const size_t n = errors.size();
                return n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
              }
            };
            std::map<std::string, Tally> summary;  // figure [part] -> tally
            for (const auto& r : rows) {
              if (!r.computed) {
                fmt::print("{:<42} {:<36} {:>16} {:>16} {:>8} {:>7}  not computed: {}\n", r.case_id, r.figure, "-", "-", "-", "-", r.note);
                continue;
              }
              fmt::print("{:<42} {:<36} {:>16.6g} {:>16.6g} {:>8.3f} {:>6.1f}%  {}{}\n", r.case_id, r.figure, r.printed, r.ours, r.error_percent, r.target_percent,
                         r.met ? "" : "MISS ", r.note);
              auto& s = summary[r.part.empty() ? r.figure : r.figure + " [" + r.part + "]"];
              s.met += r.met ? 1 : 0;
              s.total += 1;
              if (std::fabs(r.error_percent) > std::fabs(s.worst)) s.worst = r.error_percent;
              s.errors.push_back(std::fabs(r.error_percent));
            }
            fmt::print("\nSummary per figure:\n");
            for (auto& [figure, s] : summary) {
              fmt::print("  {:<58} {:>4} of {:<4} within target, median |error| {:.2f}%, worst {:+.2f}%\n", figure, s.met, s.total, s.median(), s.worst);
            }
            return 0;
          }};
}

}  // namespace vc::cli
