// vramcalc validate PATH: recompute every case and print the error table, per figure and per share
// (fitted / set aside). PATH is a reference folder (llamacpp/runs.json, engine-logs/cases.json) or
// an engine-logs JSON file in the repository's format (tests/data/engine-logs.json).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/engine_log.h"
#include "engines/validate.h"

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
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
      out.push_back({{"figure", r.figure}, {"printed", r.printed}, {"ours", r.ours}, {"error_percent", r.error_percent}, {"computed", r.computed}, {"note", r.note}});
    fmt::print("{}\n", nlohmann::json{{"schema", "vramcalc.validate-log/1"}, {"engine", log.engine}, {"model", model.id.empty() ? model.name : model.id}, {"rows", out}}.dump(2));
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

}  // namespace

Command add_validate(CLI::App& app) {
  auto* sub = app.add_subcommand("validate", "Compare our engine profiles with what llama.cpp, vLLM and SGLang printed (reference cases or public logs)");
  struct Opts {
    std::string path;
    std::string log;
    std::string model;
    std::string gpu_memory;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("PATH", o->path, "A reference folder (llamacpp/runs.json, engine-logs/cases.json) or an engine-logs JSON file (tests/data/engine-logs.json)");
  sub->add_option("--log", o->log, "A start-up log of vLLM, SGLang or llama.cpp: its settings are read and our figures printed beside its own");
  sub->add_option("--model", o->model, "With --log: the model (catalogue id, config.json, .gguf, hf:ORG/REPO) when the log does not name it");
  sub->add_option("--gpu-memory", o->gpu_memory, "With --log: the card's memory when the log does not print it, e.g. 80GB or 79.19GiB");
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            if (!o->log.empty()) return validate_log(o->log, o->model, o->gpu_memory, o->json);
            if (o->path.empty()) throw InputError("PATH", "is required: a reference folder or an engine-logs JSON file (or --log FILE)");
            const bool file = std::filesystem::is_regular_file(o->path);
            auto rows = file ? validate_engine_logs(o->path) : validate_reference(o->path);
            if (o->json) {
              nlohmann::json out = nlohmann::json::array();
              for (const auto& r : rows) {
                out.push_back({{"case", r.case_id}, {"figure", r.figure}, {"printed", r.printed}, {"ours", r.ours}, {"error_percent", r.error_percent},
                               {"target_percent", r.target_percent}, {"met", r.met}, {"note", r.note}, {"set", r.set}, {"computed", r.computed}});
              }
              fmt::print("{}\n", nlohmann::json{{"schema", "vramcalc.validate/1"}, {"rows", out}}.dump(2));
              return 0;
            }
            fmt::print("{:<44} {:<10} {:<40} {:>14} {:>14} {:>8} {:>7}  {}\n", "case", "share", "figure", "printed", "ours", "error%", "target", "note");
            std::map<std::string, std::map<std::string, std::pair<int, int>>> summary;  // figure -> share -> met, total
            for (const auto& r : rows) {
              if (!r.computed) {
                fmt::print("{:<44} {:<10} {:<40} {:>14} {:>14} {:>8} {:>7}  {}\n", r.case_id, r.set, r.figure, "-", "-", "-", "-", r.note);
                continue;
              }
              fmt::print("{:<44} {:<10} {:<40} {:>14.4g} {:>14.4g} {:>8.3f} {:>6.1f}%  {}{}\n", r.case_id, r.set, r.figure, r.printed, r.ours, r.error_percent,
                         r.target_percent, r.met ? "" : "MISS ", r.note);
              auto& s = summary[r.figure][r.set.empty() ? "all" : r.set];
              s.first += r.met ? 1 : 0;
              s.second += 1;
            }
            fmt::print("\nSummary per figure (within target / computed):\n");
            for (const auto& [figure, shares] : summary) {
              std::string line;
              for (const auto& [share, s] : shares) line += fmt::format("  {}: {} of {}", share, s.first, s.second);
              fmt::print("  {:<42}{}\n", figure, line);
            }
            return 0;
          }};
}

}  // namespace vc::cli
