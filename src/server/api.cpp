#include "server/api.h"

#include <fmt/format.h>

#include <memory>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "core/error_message.h"
#include "core/units.h"
#include "engines/engine.h"
#include "engines/engine_log.h"
#include "estimate/estimate.h"
#include "estimate/extras_inputs.h"
#include "estimate/scenario_inputs.h"
#include "estimate/ladder.h"
#include "estimate/streaming.h"
#include "estimate/sweep.h"
#include "plan/box_inputs.h"
#include "plan/check.h"
#include "plan/plan_report.h"
#include "plan/serving_command.h"
#include "report/json_inspect.h"
#include "report/json_plan.h"
#include "report/json_report.h"
#include "report/json_validate_log.h"
#include "report/json_verbs.h"
#include "server/caller_files.h"
#include "sources/remote/http_source.h"

namespace vc::server {
namespace {

// Only catalogue models: a remote caller must not make the server read files by path.
const Model& catalogue_model(const RequestParams& p, const std::string& name) {
  const std::string id = p.get(name);
  if (id.empty()) throw InputError(name, "is required; give a catalogue id such as kimi-k3 (see /api/models)");
  const Model* m = Catalogue::builtin().find(id);
  if (!m) throw InputError(name, "'" + id + "' is not in the catalogue; accepted: " + Catalogue::builtin().ids());
  return *m;
}

// The scenario parameters: ScenarioInputs' fields, the CLI's ScenarioFlags, with their defaults
// and parser. (`engine` is every verb's own parameter.)
const std::vector<std::string> kScenarioParams = input_names(ScenarioInputs::fields());

Scenario scenario_from(const RequestParams& p) {
  ScenarioInputs in;
  p.fill(in, ScenarioInputs::fields());
  in.engine = p.get("engine", in.engine);
  return in.to_scenario();
}

// Which scenario parameters the caller gave: a pasted engine-command sets the others.
ScenarioGiven given_of(const RequestParams& p) { return {p.has("context"), p.has("seqs"), p.has("cache-dtype"), p.has("quant")}; }

// compare's B side: the four flags the CLI's --b-* offer, over A's scenario.
Scenario b_side(const RequestParams& p, const Scenario& a) {
  Scenario s = a;
  if (p.has("b-quant")) s.quant = p.get("b-quant");
  if (p.has("b-context")) s.context = parse_tokens(p.get("b-context"), "b-context");
  if (p.has("b-seqs")) s.sequences = parse_count(p.get("b-seqs"), "b-seqs", 1, kMaxSequences);
  if (p.has("b-cache-dtype")) s.cache_dtype = p.get("b-cache-dtype");
  return s;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `units` (gb or gib) is the API's one addition: it asks for display strings beside the bytes.
nlohmann::json with_display(nlohmann::json j, const Estimate& e, const RequestParams& p) {
  if (p.has("units")) j["display"] = estimate_display_json(e, parse_units(p.get("units"), "units"));
  return j;
}

// The engine parameters: EngineInputs' fields, the CLI's estimate flags.
const std::vector<std::string> kEngineParams = input_names(EngineInputs::fields());

EngineInputs engine_inputs_from(const RequestParams& p) {
  EngineInputs in;
  p.fill(in, EngineInputs::fields());
  return in;
}

std::shared_ptr<const Model> request_model(const RequestParams& p);

// The caller's model spec for `mmproj=auto` (source=hf:...) and the extras' notes: as the CLI's MODEL.
std::string model_spec(const RequestParams& p) { return p.has("source") ? p.get("source") : p.get("model"); }

nlohmann::json run_estimate(const RequestParams& p) {
  const ExtrasInputs extras_in = caller_extras(p);  // refused before anything is read
  RemoteDeadline deadline(remote_timeout());        // one budget for every read of the request
  const auto model = request_model(p);
  EngineRequest r = engine_request(*model, scenario_from(p), engine_inputs_from(p), given_of(p));
  read_caller_command_adapters(r.command);
  const Extras extras = load_caller_extras(extras_in, model_spec(p), r);  // image tokens grow the context
  Estimate e = estimate(*model, r.scenario);
  nlohmann::json j = estimate_json(e, run_engine(r));
  if (!extras.lines.empty()) j["components"] = components_json(extras, e.total_bytes);
  return with_display(j, e, p);
}

nlohmann::json run_sweep(const RequestParams& p) {
  const auto model = request_model(p);
  const Model& m = *model;
  std::vector<uint64_t> contexts;
  for (const auto& c : p.list("contexts", "8K,32K,128K,1M", 64)) contexts.push_back(parse_tokens(c, "contexts"));
  auto rows = sweep(m, scenario_from(p), contexts);
  nlohmann::json j = sweep_json(m, rows);
  if (p.has("units")) {
    for (std::size_t i = 0; i < rows.size(); ++i) j["rows"][i]["display"] = estimate_display_json(rows[i].estimate, parse_units(p.get("units"), "units"));
  }
  return j;
}

// B's estimate: a refusal names B's parameter (b-quant), not A's (quant), so a caller can tell them apart.
Estimate estimate_b(const Model& b, const Scenario& sb) {
  try {
    return estimate(b, sb);
  } catch (const InputError& e) {
    const std::string bare = e.subject().rfind("--", 0) == 0 ? e.subject().substr(2) : e.subject();
    if (bare != "quant" && bare != "context" && bare != "seqs" && bare != "cache-dtype") throw;
    const std::string message = message_of(e);
    throw InputError("b-" + bare, message);
  }
}

nlohmann::json run_compare(const RequestParams& p) {
  const Model& a = catalogue_model(p, "a");
  const Model& b = p.has("b") ? catalogue_model(p, "b") : a;
  Scenario sa = scenario_from(p);
  Scenario sb = b_side(p, sa);
  Estimate ea = estimate(a, sa);
  Estimate eb = estimate_b(b, sb);
  nlohmann::json j = compare_json(ea, eb, engine_for(a, sa), engine_for(b, sb));
  j["a"] = with_display(j["a"], ea, p);
  j["b"] = with_display(j["b"], eb, p);
  if (p.has("units")) {
    const ByteUnits units = parse_units(p.get("units"), "units");
    const bool more = eb.total_bytes >= ea.total_bytes;
    const uint64_t gap = more ? eb.total_bytes - ea.total_bytes : ea.total_bytes - eb.total_bytes;
    // A gap that rounds to 0.00 in the display is "the same" to a reader, not "exceeds by 0.00 GB".
    j["difference_display"] = format_bytes(gap, units) == format_bytes(0, units)
                                  ? std::string("A and B need the same memory (to the displayed precision).")
                                  : std::string("B ") + (more ? "exceeds" : "is under") + " A by " + format_bytes(gap, units) + ".";
  }
  return j;
}

nlohmann::json run_models(const RequestParams&) { return models_json(Catalogue::builtin().models()); }

nlohmann::json run_builds(const RequestParams& p) {
  const Model& m = catalogue_model(p, "model");
  ScenarioInputs in;
  in.engine = p.get("engine", in.engine);
  in.context = p.get("context", in.context);
  in.seqs = p.get("seqs", in.seqs);
  const Scenario scenario = in.to_scenario();
  if (scenario.engine != EngineKind::Rule) return engine_builds_json(m, scenario, engine_ladder(m, scenario, scenario.engine));
  return builds_json(m, build_ladder(m, parse_percent_bp(p.get("overhead", "15%"), "overhead")));
}

nlohmann::json run_stream(const RequestParams& p) {
  const Model& m = catalogue_model(p, "model");
  std::optional<uint64_t> bits_milli;
  if (p.has("bpw")) bits_milli = parse_fixed(p.get("bpw"), "bpw", 3, 64000, "bits per weight such as 1.7 or 4.25, above 0 and at most 64");
  std::vector<uint64_t> bws;
  for (const auto& g : p.list("gbps", "5,19", 32)) bws.push_back(parse_bytes(g + "GB", "gbps"));
  return stream_json(m, stream_for(m, p.get("quant"), bits_milli, bws));
}


// The hardware parameters of plan and check: BoxInputs' fields, the CLI's BoxFlags, parsed by the
// same BoxInputs, so the API refuses exactly what the CLI refuses.
const std::vector<std::string> kBoxParams = input_names(BoxInputs::fields());

BoxInputs box_from(const RequestParams& p) {
  BoxInputs b;
  p.fill(b, BoxInputs::fields());
  return b;
}

// A plan's work and its answer grow with every device (65,536 of them is seconds of CPU and a
// 24 MB document), so the server takes fewer in all than the CLI does.
constexpr uint64_t kMaxApiDevices = 1024;

Box api_box(const BoxInputs& in) {
  Box box = in.to_box();
  if (box.device_count() > kMaxApiDevices) {
    throw InputError(box.nodes > 1 ? "nodes" : "gpu", fmt::format("{} devices per node x {} nodes is {} devices; the server plans at most {} (the CLI has no such limit)",
                                                                  box.gpus.size(), box.nodes, box.device_count(), kMaxApiDevices));
  }
  return box;
}

nlohmann::json run_plan(const RequestParams& p) {
  const Model& m = catalogue_model(p, "model");
  const BoxInputs in = box_from(p);
  const Box box = api_box(in);
  PlanOptions opts = in.to_options();
  read_caller_command_adapters(opts.command);
  Scenario scenario = scenario_from(p);
  in.apply_command(scenario, given_of(p));
  Plan plan = make_plan(m, scenario, box, opts);
  PlanSolved solved = solve(plan);
  nlohmann::json j = plan_json(plan, solved);
  if (p.has("units")) j["display"] = plan_display_json(plan, solved, parse_units(p.get("units"), "units"));
  return j;
}

// `check` over the catalogue; --detect is the CLI's alone (the server's GPUs are not the caller's).
nlohmann::json run_check(const RequestParams& p) {
  const BoxInputs in = box_from(p);
  const Box box = api_box(in);
  PlanOptions opts = in.to_options();
  read_caller_command_adapters(opts.command);
  const CheckPreference prefer = parse_check_preference(p.get("prefer", "quality"), "prefer");
  Scenario scenario = scenario_from(p);
  in.apply_command(scenario, given_of(p));  // as plan: a pasted command's context, sequences, cache dtype
  const auto rows = check_models(Catalogue::builtin().models(), box, opts, scenario, prefer);
  nlohmann::json j = check_json(box, {}, rows, opts.engine);
  if (p.has("units")) {
    const ByteUnits units = parse_units(p.get("units"), "units");
    for (std::size_t i = 0; i < rows.size(); ++i) j["rows"][i]["display"] = check_row_display_json(rows[i], units);
  }
  return j;
}

// A pasted start-up log beside our figures (`validate --log`). The model is a catalogue entry: the
// caller's `model`, else the one the log names (by id or the Hub repository it prints); the server
// reads no file or address the log mentions.
nlohmann::json run_validate_log(const RequestParams& p) {
  const std::string text = p.get("log");
  if (text.empty()) throw InputError("log", "is required: paste the start-up lines vLLM, SGLang or llama.cpp printed (at most 60 KiB)");
  const EngineLog log = parse_engine_log(text);
  const Model* model = p.has("model") ? &catalogue_model(p, "model") : log_catalogue_model(log.model);
  if (!model) {
    throw InputError("model", log.model.empty() ? "the log does not name its model; give model, a catalogue id (see /api/models)"
                                                : "the log's model '" + log.model + "' is not in the catalogue; give model, a catalogue id (see /api/models)");
  }
  std::optional<uint64_t> card;
  if (p.has("gpu-memory")) card = parse_bytes(p.get("gpu-memory"), "gpu-memory");
  return validate_log_json(log, *model, compare_engine_log(log, *model, card));
}

nlohmann::json run_devices(const RequestParams&) { return devices_json(DeviceTable::builtin().all()); }

nlohmann::json run_inspect(const RequestParams& p) { return inspection_json(read_caller_model(p)); }

// estimate and sweep answer for a catalogue `model`, or for the caller's own `source` / `config`.
std::shared_ptr<const Model> request_model(const RequestParams& p) {
  if (!p.has("source") && !p.has("config")) return std::shared_ptr<const Model>(std::shared_ptr<const Model>(), &catalogue_model(p, "model"));
  if (p.has("model")) throw InputError("model", "give either model (a catalogue id) or source/config, not both");
  CheckpointInspection c = read_caller_model(p);
  if (!c.model) throw InputError(p.has("config") ? "config" : "source", "holds no model geometry: " + c.no_model);
  return std::make_shared<const Model>(std::move(*c.model));
}

}  // namespace

const std::vector<ApiRoute>& api_routes() {
  static const std::vector<ApiRoute> routes = {
      {"estimate", with(with(with({"model", "source", "config", "units", "lora"}, kScenarioParams), kEngineParams), input_names(ExtrasInputs::fields())), run_estimate},
      {"sweep", with({"model", "source", "config", "contexts", "units", "engine"}, kScenarioParams), run_sweep},
      {"compare", with({"a", "b", "units", "engine", "b-quant", "b-context", "b-seqs", "b-cache-dtype"}, kScenarioParams), run_compare},
      {"models", {}, run_models},
      {"builds", {"model", "overhead", "engine", "context", "seqs"}, run_builds},
      {"stream", {"model", "quant", "bpw", "gbps"}, run_stream},
      {"plan", with(with({"model", "units"}, kScenarioParams), kBoxParams), run_plan},
      {"check", with(with({"units", "prefer"}, kScenarioParams), kBoxParams), run_check},
      {"devices", {}, run_devices},
      {"inspect", {"source", "config"}, run_inspect},
      {"validate-log", {"log", "model", "gpu-memory"}, run_validate_log},
  };
  return routes;
}

std::string error_body(const std::string& field, const std::string& message) {
  return nlohmann::json{{"error", {{"field", field}, {"message", message}}}}.dump();
}

ApiAnswer call_api(std::string_view verb, const RequestParams& params) {
  for (const auto& r : api_routes()) {
    if (r.verb != verb) continue;
    try {
      params.check_known(r.params);
      return {200, r.run(params).dump()};
    } catch (const RemoteTimeout& e) {
      const std::string message = message_of(e);
      return {504, error_body(e.subject(), message)};
    } catch (const InputError& e) {
      // The library names CLI flags ("--context"); the API's parameters are the same names bare.
      std::string field = e.subject().rfind("--", 0) == 0 ? e.subject().substr(2) : e.subject();
      const std::string message = message_of(e);
      return {400, error_body(field, message)};
    } catch (const OverflowError& e) {
      return {422, error_body("request", std::string(e.what()) + " (the inputs are too large to compute exactly)")};
    }
  }
  std::string verbs;
  for (const auto& r : api_routes()) verbs.append(verbs.empty() ? "" : ", ").append(r.verb);
  return {404, error_body("verb", "'" + std::string(verb) + "' is not an API route; accepted: " + verbs)};
}

}  // namespace vc::server
