#include "plan/plan_report.h"

#include <fmt/format.h>

#include "plan/engine_command.h"
#include "report/engine_report.h"

namespace vc {
namespace {

// The rule's device table: each device's weights, cache, state and overhead shares of the split.
std::string split_table(const SplitResult& s, ByteUnits u) {
  std::string out;
  out += fmt::format("{:>4} {:<24} {:>4} {:>12} {:>12} {:>10} {:>12} {:>12} {:>12} {:>12}  {:<4} {}\n", "#", "device", "node", "weights", "cache", "state", "overhead",
                     "total", "capacity", "headroom", "fits", "holds");
  for (std::size_t i = 0; i < s.devices.size(); ++i) {
    const auto& d = s.devices[i];
    const std::string head = d.headroom() >= 0 ? format_bytes(static_cast<uint64_t>(d.headroom()), u) : "-" + format_bytes(static_cast<uint64_t>(-d.headroom()), u);
    out += fmt::format("{:>4} {:<24} {:>4} {:>12} {:>12} {:>10} {:>12} {:>12} {:>12} {:>12}  {:<4} {}{}\n", d.rank + 1, d.device, d.node + 1, format_bytes(d.weights, u),
                       format_bytes(d.cache, u), format_bytes(d.state, u), format_bytes(d.overhead, u), format_bytes(d.total, u), format_bytes(d.capacity, u), head,
                       d.fits() ? "yes" : "NO", d.holds, i == s.busiest ? "  <- busiest" : "");
  }
  out += fmt::format("TP {} × PP {}{}{}{}\n", s.tp, s.pp, s.ep > 1 ? fmt::format(" × EP {}", s.ep) : "", s.dp > 1 ? fmt::format(", DP attention {}", s.dp) : "",
                     s.kv_replicated ? fmt::format("; kv heads replicated: {} per rank", s.kv_heads_per_rank) : (s.latent_replicated ? "; latent cache whole on every rank" : ""));
  return out;
}

}  // namespace

PlanSolved solve(const Plan& p) {
  PlanSolved s;
  const auto& sc = p.estimate.scenario;
  s.with_offload = !p.fits_on_devices;
  const uint64_t limit = p.model->max_context ? p.model->max_context : kMaxContextTokens;
  if (p.options.engine != EngineKind::Rule && !p.box.gpus.empty()) {  // the engine's own per-device figures
    const EngineRequest r = plan_engine_request(*p.model, sc, p.box, p.options,
                                                p.llamacpp_offload ? std::optional(p.llamacpp_offload->placement) : std::nullopt);
    s.with_offload = p.llamacpp_offload.has_value();
    s.max_context = engine_max_context(r, limit);
    s.max_sequences = engine_max_sequences(r);
    return s;
  }
  s.max_context = solve_max_context(p.footprint, p.box, p.options, sc.sequences, limit, s.with_offload);
  s.max_sequences = solve_max_sequences(p.footprint, p.box, p.options, sc.context, s.with_offload);
  return s;
}

std::string plan_text(const Plan& p, const PlanSolved& solved, bool explain, ByteUnits u) {
  const auto& sc = p.estimate.scenario;
  std::string out = fmt::format("{} ({}) on {}, split {}, weights {}, context {} × {} sequence{}\n", p.model->name, p.model->id, p.box.describe(),
                                to_string(p.options.split), p.estimate.weights.tier, format_tokens(sc.context), sc.sequences, sc.sequences == 1 ? "" : "s");
  out += gpu_share_lines(p.box);  // a unified device's capacity: the OS's GPU share, with its formula and source
  if (p.options.engine != EngineKind::Rule) {
    // One device table: the engine's own per-device lines (the rule's split would contradict them).
    out += fmt::format("{} allocates {} in all ({} devices in aggregate).\n\n", to_string(p.options.engine), format_bytes(p.engine.total_bytes, u),
                       format_bytes(p.aggregate_capacity, u));
    out += engine_text(p.engine, explain, u);
    if (p.llamacpp_offload && !p.llamacpp_offload->given && !p.llamacpp_offload->fitted) {
      out += fmt::format("\nWith llama.cpp's offload ({}), what it allocates per device:\n", llamacpp_offload_flags(*p.llamacpp_offload));
      out += engine_text(p.llamacpp_offload->answer, explain, u);
    }
    if (p.serving_offload) {
      out += fmt::format("\nWith {}'s CPU offload (--cpu-offload-gb {}), what it allocates per device:\n", to_string(p.options.engine),
                         p.serving_offload->cap >> 30);
      out += engine_text(p.serving_offload->answer, explain, u);
    }
  } else {
    out += fmt::format("Estimate total {} (weights {}, cache and state {}, overhead {}); devices {} in aggregate.\n\n", format_bytes(p.estimate.total_bytes, u),
                       format_bytes(p.estimate.weights.bytes, u), format_bytes(p.estimate.context_bytes(), u), format_bytes(p.estimate.overhead_bytes, u),
                       format_bytes(p.aggregate_capacity, u));
    if (p.split) out += split_table(*p.split, u);
    out += "\nEngine: rule (the default: the table above; --engine llamacpp|vllm|sglang for what an engine allocates per device)\n";
  }
  out += "\n" + p.verdict + "\n";
  if (p.offload && !p.llamacpp_offload && !(p.serving_offload && p.serving_offload->fits)) {  // an engine's own offload is in its device table above
    const auto& o = *p.offload;
    if (p.options.engine == EngineKind::Rule)
      out += o.hot_cache ? fmt::format("\nOffload ({} experts per MoE layer, hot-expert cache on: Zipf skew {}, hottest first):\n", o.experts, o.skew)
                         : fmt::format("\nOffload ({} experts per MoE layer, no hot-expert cache: each tier serves the share it holds; --hot-cache on for an engine that keeps one):\n", o.experts);
    else out += fmt::format("\nOffload tiers (what holds the bytes; the speed below follows {}'s own placement, with no hot-expert cache):\n", to_string(p.options.engine));
    out += fmt::format("{:<5} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>12} {:>10}\n", "tier", "capacity", "cache", "weights", "experts", "exp/layer", "hit rate", "read/token", "GB/s");
    for (const auto& t : o.tiers) {
      // The hit rate and reads are the rule's hot-expert model; an engine's speed has its own placement.
      const bool rule = p.options.engine == EngineKind::Rule;
      out += fmt::format("{:<5} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>12} {:>10}\n", t.tier, t.capacity == UINT64_MAX ? "-" : format_bytes(t.capacity, u),
                         format_bytes(t.cache, u), format_bytes(t.weights, u), format_bytes(t.experts, u), t.experts_per_layer,
                         rule ? fmt::format("{:.1f}%", t.hit_rate * 100) : "-", rule ? format_bytes(t.read_weights + t.read_cache, u) : "-",
                         format_grouped(static_cast<double>(t.bandwidth) / 1e9, 1));
    }
    if (!o.fits) out += "Does not fit: " + o.why + "\n";
  }
  if (p.decode.upper_tok_s > 0) {
    out += fmt::format("\nDecode: {}, {:.2f} upper bound (one sequence){}\n", speed_text_for(p.decode, 2), p.decode.upper_tok_s,
                       p.options.engine == EngineKind::Rule ? "; --engine llamacpp|vllm|sglang for the engine's placement and a narrower range" : "");
  } else {
    // The engine's speed says why it is unknown; the rule's does not.
    const std::string why = p.decode.formula.rfind("unknown: ", 0) == 0 ? p.decode.formula.substr(9)
                                                                          : "nothing fits, or a device's bandwidth is unknown: name it with --gpu";
    out += "\nDecode: unknown (" + why + ")\n";
  }
  // The rule's prefill (compute on the GPUs) is given only when the weights sit on them; its upper bound beside it.
  if (p.prefill.expected_tok_s > 0 && (p.prefill.low_tok_s > 0 || (p.split && !p.offload))) {
    out += fmt::format("Prefill: {}{}\n", speed_text_for(p.prefill, 0),
                       p.prefill.upper_tok_s > p.prefill.expected_tok_s ? fmt::format(", {:.0f} upper bound", p.prefill.upper_tok_s) : "");
  }
  out += fmt::format("Largest context at {} sequence{}: {}; most sequences at {}: {}{}\n", sc.sequences, sc.sequences == 1 ? "" : "s",
                     solved.max_context ? format_tokens(solved.max_context) + " (" + format_count(solved.max_context) + ")" : "none fits",
                     format_tokens(sc.context), format_count(solved.max_sequences), solved.with_offload ? " (with offload)" : "");
  if (!p.model->weights_available()) out += fmt::format("\nNo engine command line: {} is {} ({}).\n", p.model->name, status_text(p.model->status), p.model->status_note);
  for (const auto& c : engine_commands(p)) {
    out += fmt::format("\n{}:\n  {}\n", c.engine, c.command);
    for (const auto& n : c.notes) out += "  # " + n + "\n";
  }
  if (explain) {
    out += "\n";
    for (const auto& l : p.lines) {
      out += fmt::format("{}\n  = {}\n  assumes: {}\n  source: {}\n", l.label, l.formula, l.assumption, l.source);
    }
  }
  return out;
}

nlohmann::json plan_json(const Plan& p, const PlanSolved& solved) {
  using nlohmann::json;
  const auto& sc = p.estimate.scenario;
  json j;
  j["schema"] = "vramcalc.plan/2";
  j["model"] = p.model->id;
  j["box"] = p.box.describe();
  j["split"] = to_string(p.options.split);
  j["weights_tier"] = p.estimate.weights.tier;
  j["context"] = sc.context;
  j["sequences"] = sc.sequences;
  j["estimate_total_bytes"] = p.estimate.total_bytes;
  j["aggregate_capacity_bytes"] = p.aggregate_capacity;
  j["gpu_shares"] = gpu_shares_json(p.box);
  j["aggregate_fits"] = p.aggregate_fits;
  j["fits_on_devices"] = p.fits_on_devices;
  j["verdict"] = p.verdict;
  j["engine"] = engine_json(p.engine);
  if (p.llamacpp_offload) {
    const auto& lo = *p.llamacpp_offload;
    j["llamacpp_offload"] = {{"flags", llamacpp_offload_flags(lo)}, {"n_gpu_layers", lo.n_gpu_layers ? nlohmann::json(*lo.n_gpu_layers) : nlohmann::json(nullptr)},
                             {"n_cpu_moe", lo.n_cpu_moe}, {"layers", lo.layers}, {"given", lo.given}, {"fitted", lo.fitted}, {"fits", lo.fits}, {"engine", engine_json(lo.answer)}};
  }
  if (p.serving_offload) {
    const auto& so = *p.serving_offload;
    j["serving_offload"] = {{"cpu_offload_gb", so.cap >> 30}, {"cap_bytes", so.cap}, {"fits", so.fits}, {"engine", engine_json(so.answer)}};
  }
  if (p.split) {
    const auto& s = *p.split;
    j["parallel"] = {{"tp", s.tp}, {"pp", s.pp}, {"ep", s.ep}, {"dp", s.dp}, {"kv_replicated", s.kv_replicated}, {"kv_heads_per_rank", s.kv_heads_per_rank},
                     {"latent_replicated", s.latent_replicated}};
    j["busiest"] = s.busiest;
    json devs = json::array();
    for (const auto& d : s.devices) {
      devs.push_back({{"device", d.device}, {"node", d.node}, {"rank", d.rank}, {"stage", d.stage}, {"weights_bytes", d.weights}, {"cache_bytes", d.cache},
                      {"state_bytes", d.state}, {"overhead_bytes", d.overhead}, {"total_bytes", d.total}, {"capacity_bytes", d.capacity},
                      {"headroom_bytes", d.headroom()}, {"fits", d.fits()}, {"read_per_token_bytes", d.read_per_token}, {"holds", d.holds}});
    }
    j["devices"] = devs;
  }
  if (p.offload) {
    const auto& o = *p.offload;
    json tiers = json::array();
    for (const auto& t : o.tiers) {
      tiers.push_back({{"tier", t.tier}, {"capacity_bytes", t.capacity == UINT64_MAX ? json(nullptr) : json(t.capacity)}, {"bandwidth_bytes_per_s", t.bandwidth},
                       {"cache_bytes", t.cache}, {"weights_bytes", t.weights}, {"expert_bytes", t.experts}, {"experts_per_layer", t.experts_per_layer},
                       {"hit_rate", t.hit_rate}, {"read_weights_bytes", t.read_weights}, {"read_cache_bytes", t.read_cache}, {"seconds", t.seconds}});
    }
    j["offload"] = {{"fits", o.fits}, {"why", o.why}, {"experts", o.experts}, {"skew", o.skew}, {"hot_cache", o.hot_cache}, {"tiers", tiers},
                    {"weights_seconds_per_token", o.weights_seconds}, {"seconds_per_token", o.seconds}, {"formula", o.formula}};
  }
  auto speed = [](const Speed& s) {
    json o = {{"upper_tok_s", s.upper_tok_s}, {"expected_tok_s", s.expected_tok_s}, {"estimate", true}, {"formula", s.formula}, {"assumption", s.assumption}, {"source", s.source}};
    if (s.low_tok_s > 0) o["range_tok_s"] = {s.low_tok_s, s.high_tok_s};
    return o;
  };
  j["decode"] = speed(p.decode);
  if (p.replicas > 1)  // -dp N: the figures above are one replica's
    j["data_parallel"] = {{"replicas", p.replicas}, {"box", p.replicated_box}, {"gpus_per_replica", p.box.device_count()},
                          {"aggregate_decode_tok_s", static_cast<double>(p.replicas) * p.decode.expected_tok_s}};
  if ((p.split && !p.offload) || p.prefill.low_tok_s > 0) j["prefill"] = speed(p.prefill);
  j["solvers"] = {{"max_context", solved.max_context}, {"max_sequences", solved.max_sequences}, {"with_offload", solved.with_offload}};
  json cmds = json::array();
  for (const auto& c : engine_commands(p)) cmds.push_back({{"engine", c.engine}, {"command", c.command}, {"notes", c.notes}});
  j["commands"] = cmds;
  json lines = json::array();
  for (const auto& l : p.lines) lines.push_back({{"id", l.id}, {"label", l.label}, {"bytes", l.bytes}, {"formula", l.formula}, {"assumption", l.assumption}, {"source", l.source}});
  j["lines"] = lines;
  return j;
}

}  // namespace vc
