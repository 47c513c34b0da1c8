#include "plan/box_inputs.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/units.h"
#include "engines/engine_kind.h"
#include "engines/engine_run.h"
#include "engines/llamacpp_placement.h"
#include "plan/serving_command.h"

namespace vc {

const std::vector<InputField<BoxInputs>>& BoxInputs::fields() {
  using B = BoxInputs;
  static const std::vector<InputField<B>> table = {
      {"gpu", &B::gpu, "GPUs of one node: H200x8, '3090,3080Ti', 'RTX 4090', none (see `vramcalc devices`)", "-g"},
      {"nodes", &B::nodes, "Nodes, each with the --gpu set"},
      {"ram", &B::ram, "System RAM free for weights and cache per node, e.g. 512GB (unified memory: what the GPU's share leaves, unless given)"},
      {"gpu-wired-limit", &B::gpu_wired_limit, kGpuWiredLimitHelp},
      {"ram-gbps", &B::ram_gbps, "System RAM read bandwidth in GB/s"},
      {"ssd-gbps", &B::ssd_gbps, "SSD read bandwidth in GB/s (0: weights may not stream from disk)"},
      {"split", &B::split, "layer, pp, tp, ep or tp+ep"},
      {"engine", &B::engine, std::string("Whose per-device figures decide fits, solvers and the command: ") + kEngineNames},
      {"per-device", &B::per_device, "Fixed memory per device added to the rule's figures (engines count their own runtime memory); auto: 0"},
      {"efficiency", &B::efficiency, "Achieved share of peak memory bandwidth during decode"},
      {"compute-efficiency", &B::compute_efficiency, "Achieved share of peak BF16 compute during prefill"},
      {"expert-skew", &B::expert_skew, "Zipf exponent of expert popularity for --hot-cache on (0 = uniform)"},
      {"hot-cache", &B::hot_cache, "off: experts land in no particular order, each tier serves the share it holds (llama.cpp, vLLM, SGLang); on: the hottest experts in the fastest tier, as SSD-streaming engines that keep a hot-expert cache"},
      {"engine-command", &B::engine_command, "A pasted engine command: llama.cpp (llama-server ... -ngl, -ts, -ot, --n-cpu-moe: its placement sets the speed), vLLM (vllm serve ... -tp, -pp, --enable-expert-parallel, --gpu-memory-utilization, --max-model-len, --kv-cache-dtype) or SGLang (python -m sglang.launch_server ... --tp, --pp-size, --ep, --mem-fraction-static, --context-length): its flags set the engine, the split and the per-device answer", "", false},
      {"n-cpu-moe", &B::n_cpu_moe, "Keep the routed experts of the first N layers in RAM, as llama.cpp's --n-cpu-moe (implies --engine llamacpp)", "", false},
      {"experts-per-token", &B::experts_per_token, "Active routed experts per token for the speed (default: the model's config)", "", false},
      {"sockets", &B::sockets, "CPU sockets reading RAM; --ram-gbps is one socket's (a second adds a measured share, data/speed_efficiency.json)"},
      {"threads", &B::threads, "CPU threads computing the layers held in RAM, as llama.cpp's -t (default: a pasted command's -t, else the engine's: the physical cores)", "", false},
      {"spec-method", &B::spec_method, "Speculative decoding for the engines' decode speed: mtp (the model's MTP/NEXTN head), eagle, draft (a draft model)", "", false},
      {"spec-tokens", &B::spec_tokens, "Tokens drafted per verification step (llama.cpp --draft-max, vLLM num_speculative_tokens, SGLang --speculative-num-steps); mtp: 1", "", false},
      {"spec-acceptance", &B::spec_acceptance, "Share of drafted tokens the target accepts, e.g. 0.7 (mtp default 0.85: DeepSeek-V3 report)", "", false},
      {"spec-draft", &B::spec_draft, "The draft model's catalogue id, for --spec-method draft", "", false},
      {"spec-config", &B::spec_config, "vLLM's --speculative-config JSON, e.g. '{\"method\":\"mtp\",\"num_speculative_tokens\":3}'", "", false},
  };
  return table;
}

Box BoxInputs::to_box() const {
  Box b;
  b.gpus = parse_gpus(gpu, "--gpu");
  b.nodes = parse_count(nodes, "--nodes", 1, kMaxNodes);
  b.ram_bytes = ram == "0" ? 0 : parse_bytes(ram, "--ram");
  // "--ram 64" is 64 bytes to parse_bytes; nobody has that little RAM, so a plain count below a
  // megabyte is refused rather than planned on.
  if (b.ram_bytes && b.ram_bytes < 1'000'000 && ram.find_first_not_of("0123456789. ") == std::string::npos)
    throw InputError("--ram", "'" + ram + "' has no unit (" + ram + " bytes); did you mean " + ram + "GB? accepted: a size such as 64GB, 512GiB or 1TB");
  b.ram_bandwidth = ram_gbps == "0" ? 0 : parse_bytes(ram_gbps + "GB", "--ram-gbps");
  b.ssd_bandwidth = ssd_gbps == "0" ? 0 : parse_bytes(ssd_gbps + "GB", "--ssd-gbps");
  apply_gpu_shares(b, gpu_wired_limit, "--gpu-wired-limit");
  return b;
}

namespace {

// vLLM's speculative_config: "method" (mtp and the per-model *_mtp names, eagle, eagle3) or
// "model" (a draft model), and "num_speculative_tokens".
void read_spec_config(const std::string& text, SpeculativeSettings& s) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    throw InputError("--spec-config", "is not JSON; accepted: vLLM's --speculative-config, e.g. '{\"method\":\"mtp\",\"num_speculative_tokens\":3}'");
  }
  if (!j.is_object()) throw InputError("--spec-config", "must be a JSON object such as {\"method\":\"mtp\",\"num_speculative_tokens\":3}");
  const std::string method = j.value("method", "");
  if (method == "mtp" || (method.size() > 4 && method.ends_with("_mtp"))) s.method = "mtp";
  else if (method == "eagle" || method == "eagle3") s.method = "eagle";
  else if (method == "draft_model" || (method.empty() && j.contains("model"))) s.method = "draft";
  else throw InputError("--spec-config", "method '" + method + "' is not modelled; accepted: mtp (and *_mtp), eagle, eagle3, draft_model or a \"model\"");
  if (s.method == "draft" && j.contains("model") && j.at("model").is_string()) s.draft_model = j.at("model").get<std::string>();
  if (j.contains("num_speculative_tokens")) {
    if (!j.at("num_speculative_tokens").is_number_unsigned()) throw InputError("--spec-config", "num_speculative_tokens must be a whole number 1 to 64");
    s.tokens = static_cast<uint32_t>(parse_count(std::to_string(j.at("num_speculative_tokens").get<uint64_t>()), "--spec-config num_speculative_tokens", 1, 64));
  }
}

}  // namespace

std::optional<SpeculativeSettings> speculative_inputs(const BoxInputs& in, std::optional<EngineRun>& command) {
  SpeculativeSettings s;
  if (command) {
    const SpeculativeFlags& f = command->speculative;
    if (f.spec_type == "draft-mtp" || f.spec_type == "mtp") s.method = "mtp";
    else if (!f.draft_model.empty()) s.method = "draft";
    if (f.draft_max) s.tokens = static_cast<uint32_t>(*f.draft_max);
  }
  const bool flags = !in.spec_config.empty() || !in.spec_method.empty() || !in.spec_tokens.empty() || !in.spec_acceptance.empty() || !in.spec_draft.empty();
  if (!in.spec_config.empty()) read_spec_config(in.spec_config, s);
  if (!in.spec_method.empty()) {
    if (in.spec_method != "mtp" && in.spec_method != "eagle" && in.spec_method != "draft")
      throw InputError("--spec-method", "'" + in.spec_method + "': accepted: " + kSpeculativeMethods);
    s.method = in.spec_method;
  }
  if (!in.spec_tokens.empty()) s.tokens = static_cast<uint32_t>(parse_count(in.spec_tokens, "--spec-tokens", 1, 64));
  if (!in.spec_draft.empty()) s.draft_model = in.spec_draft;
  if (!in.spec_acceptance.empty()) {
    const uint64_t milli = parse_fixed(in.spec_acceptance, "--spec-acceptance", 3, 1000, "a share of drafted tokens accepted, above 0 and at most 1, such as 0.7");
    if (milli == 0) throw InputError("--spec-acceptance", "must be above 0 (a share such as 0.7)");
    s.acceptance = static_cast<double>(milli) / 1000.0;
  }
  if (s.method.empty()) {
    if (flags) throw InputError("--spec-method", std::string("is needed with --spec-tokens, --spec-acceptance or --spec-draft; accepted: ") + kSpeculativeMethods);
    return std::nullopt;
  }
  // DeepSeek-V3 ships one MTP module: one drafted token unless told otherwise.
  if (s.tokens == 0 && s.method == "mtp") s.tokens = 1;
  std::string missing;
  if (s.tokens == 0) missing = "--spec-tokens (tokens drafted per step, e.g. 4)";
  else if (s.method == "draft" && s.draft_model.empty()) missing = "--spec-draft (the draft model's catalogue id; a pasted -md file is not read)";
  else if (s.method != "mtp" && !s.acceptance) missing = "--spec-acceptance (the share of drafted tokens the target accepts, e.g. 0.7)";
  if (missing.empty()) return s;
  // A pasted command alone asks softly: its speed stays the plain one, with a note saying what is missing.
  if (!flags && command) {
    command->notes.push_back("speculative decoding (" + s.method + ") in the command: the decode speed counts it when " + missing + " is given");
    return std::nullopt;
  }
  const std::size_t cut = missing.find(' ');
  throw InputError(missing.substr(0, cut), "is needed for speculative method " + s.method + missing.substr(cut));
}

PlanOptions BoxInputs::to_options() const {
  PlanOptions o;
  o.split = parse_split(split, "--split");
  o.engine = parse_engine(engine, "--engine");
  // The rule's 15% covers the CUDA context; an engine counts its own runtime memory per device, so
  // --per-device adds to the rule only.
  o.per_device_fixed = per_device == "auto" ? 0 : parse_bytes(per_device, "--per-device");
  o.efficiency_bp = parse_percent_bp(efficiency, "--efficiency");
  o.compute_efficiency_bp = parse_percent_bp(compute_efficiency, "--compute-efficiency");
  const uint64_t skew_milli = expert_skew == "0" ? 0 : parse_fixed(expert_skew, "--expert-skew", 3, 4000, "a Zipf exponent from 0 to 4, such as 0.8");
  o.expert_skew = static_cast<double>(skew_milli) / 1000.0;
  if (hot_cache != "on" && hot_cache != "off") throw InputError("--hot-cache", "'" + hot_cache + "': accepted: on, off");
  o.hot_cache = hot_cache == "on";
  // A skew other than the default's 1 or the uniform 0 means a hot cache was meant; with it off
  // the skew would be silently unused.
  if (!o.hot_cache && skew_milli != 0 && skew_milli != 1000)
    throw InputError("--expert-skew", "is the hot-expert cache's Zipf exponent; give --hot-cache on with it (the default, off, places experts uniformly)");
  o.sockets = static_cast<uint32_t>(parse_count(sockets, "--sockets", 1, 8));
  if (!experts_per_token.empty()) o.experts_per_token = static_cast<uint32_t>(parse_count(experts_per_token, "--experts-per-token", 1, 1024));
  // A llama.cpp placement (pasted command, --n-cpu-moe) is llama.cpp's: the engine follows it.
  auto llamacpp_engine = [&](const char* flag) {
    if (o.engine == EngineKind::Rule) o.engine = EngineKind::LlamaCpp;
    if (o.engine != EngineKind::LlamaCpp) throw InputError(flag, std::string("places tensors the llama.cpp way; use it with --engine llamacpp (not ") + to_string(o.engine) + ")");
  };
  if (!engine_command.empty()) {
    EngineRun run = parse_engine_command(engine_command);
    if (is_serving_command(run)) {
      // vLLM / SGLang: the engine and the split are the command's; its flags set the per-rank answer.
      if (o.engine == EngineKind::Rule) o.engine = run.engine;
      if (o.engine != run.engine)
        throw InputError("--engine-command", std::string("is a ") + to_string(run.engine) + " command; use it with --engine " + to_string(run.engine) + " (not " + to_string(o.engine) + ")");
      o.split = serving_split(run, split);
    } else {
      llamacpp_engine("--engine-command");
    }
    o.command = std::move(run);
  }
  if (!n_cpu_moe.empty()) {
    llamacpp_engine("--n-cpu-moe");
    if (!o.command) {
      o.command = EngineRun{};
      o.command->engine = EngineKind::LlamaCpp;
      o.command->placement.n_gpu_layers = 1u << 20;  // -ngl all, as the plan's own command
    }
    o.n_cpu_moe = parse_count(n_cpu_moe, "--n-cpu-moe", 0, 4096);
    add_n_cpu_moe(o.command->placement, *o.n_cpu_moe);
  }
  if (!threads.empty()) o.threads = static_cast<uint32_t>(parse_count(threads, "--threads", 1, kMaxCpuThreads));
  else if (o.command && o.command->threads) o.threads = static_cast<uint32_t>(*o.command->threads);
  o.speculative = speculative_inputs(*this, o.command);
  return o;
}

void BoxInputs::apply_command(Scenario& scenario, const ScenarioGiven& given) const {
  if (!engine_command.empty()) apply_command_to_scenario(parse_engine_command(engine_command), scenario, given);
}

}  // namespace vc
