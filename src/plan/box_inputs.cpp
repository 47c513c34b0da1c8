#include "plan/box_inputs.h"

#include "core/error.h"
#include "core/units.h"
#include "engines/engine_kind.h"
#include "engines/engine_run.h"
#include "engines/llamacpp_placement.h"

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
      {"expert-skew", &B::expert_skew, "Zipf exponent of expert popularity (0 = uniform)"},
      {"hot-cache", &B::hot_cache, "on: keep the hottest experts in the fastest tier; off: experts land in no particular order (the rule engine)"},
      {"engine-command", &B::engine_command, "A llama.cpp command (llama-server ... -ngl, -ts, -ot, --n-cpu-moe): its placement sets the speed (implies --engine llamacpp)", "", false},
      {"n-cpu-moe", &B::n_cpu_moe, "Keep the routed experts of the first N layers in RAM, as llama.cpp's --n-cpu-moe (implies --engine llamacpp)", "", false},
      {"experts-per-token", &B::experts_per_token, "Active routed experts per token for the speed (default: the model's config)", "", false},
      {"sockets", &B::sockets, "CPU sockets reading RAM; --ram-gbps is one socket's (a second adds a measured share, data/speed_efficiency.json)"},
  };
  return table;
}

Box BoxInputs::to_box() const {
  Box b;
  b.gpus = parse_gpus(gpu, "--gpu");
  b.nodes = parse_count(nodes, "--nodes", 1, kMaxNodes);
  b.ram_bytes = ram == "0" ? 0 : parse_bytes(ram, "--ram");
  b.ram_bandwidth = ram_gbps == "0" ? 0 : parse_bytes(ram_gbps + "GB", "--ram-gbps");
  b.ssd_bandwidth = ssd_gbps == "0" ? 0 : parse_bytes(ssd_gbps + "GB", "--ssd-gbps");
  apply_gpu_shares(b, gpu_wired_limit, "--gpu-wired-limit");
  return b;
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
  o.sockets = static_cast<uint32_t>(parse_count(sockets, "--sockets", 1, 8));
  if (!experts_per_token.empty()) o.experts_per_token = static_cast<uint32_t>(parse_count(experts_per_token, "--experts-per-token", 1, 1024));
  // A llama.cpp placement (pasted command, --n-cpu-moe) is llama.cpp's: the engine follows it.
  auto llamacpp_engine = [&](const char* flag) {
    if (o.engine == EngineKind::Rule) o.engine = EngineKind::LlamaCpp;
    if (o.engine != EngineKind::LlamaCpp) throw InputError(flag, std::string("places tensors the llama.cpp way; use it with --engine llamacpp (not ") + to_string(o.engine) + ")");
  };
  if (!engine_command.empty()) {
    EngineRun run = parse_engine_command(engine_command);
    if (run.engine != EngineKind::LlamaCpp) throw InputError("--engine-command", "plan reads the placement of a llama.cpp command (llama-server, llama-cli); vLLM and SGLang place by --split");
    llamacpp_engine("--engine-command");
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
  return o;
}

}  // namespace vc
