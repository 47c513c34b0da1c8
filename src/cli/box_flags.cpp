#include "cli/box_flags.h"

namespace vc::cli {

void BoxFlags::add_to(CLI::App& app, bool with_split) {
  app.add_option("--gpu,-g", gpu, "GPUs of one node: H200x8, '3090,3080Ti', 'RTX 4090', none (see `vramcalc devices`)")->capture_default_str();
  app.add_option("--nodes", nodes, "Nodes, each with the --gpu set")->capture_default_str();
  app.add_option("--ram", ram, "System RAM free for weights and cache per node, e.g. 512GB")->capture_default_str();
  app.add_option("--ram-gbps", ram_gbps, "System RAM read bandwidth in GB/s")->capture_default_str();
  app.add_option("--ssd-gbps", ssd_gbps, "SSD read bandwidth in GB/s (0: weights may not stream from disk)")->capture_default_str();
  if (with_split) app.add_option("--split", split, "layer, pp, tp, ep or tp+ep")->capture_default_str();
  app.add_option("--engine", engine, std::string("Whose per-device figures decide fits, solvers and the command: ") + kEngineNames)->capture_default_str();
  app.add_option("--per-device", per_device, "Fixed memory per device added to the rule's figures (engines count their own runtime memory); auto: 0")->capture_default_str();
  app.add_option("--efficiency", efficiency, "Achieved share of peak memory bandwidth during decode")->capture_default_str();
  app.add_option("--compute-efficiency", compute_efficiency, "Achieved share of peak BF16 compute during prefill")->capture_default_str();
  app.add_option("--expert-skew", expert_skew, "Zipf exponent of expert popularity (0 = uniform)")->capture_default_str();
  app.add_option("--hot-cache", hot_cache, "on: keep the hottest experts in the fastest tier; off: experts land in no particular order (the rule engine)")->capture_default_str();
  app.add_option("--engine-command", engine_command, "A llama.cpp command (llama-server ... -ngl, -ts, -ot, --n-cpu-moe): its placement sets the speed (implies --engine llamacpp)");
  app.add_option("--n-cpu-moe", n_cpu_moe, "Keep the routed experts of the first N layers in RAM, as llama.cpp's --n-cpu-moe (implies --engine llamacpp)");
  app.add_option("--experts-per-token", experts_per_token, "Active routed experts per token for the speed (default: the model's config)");
  app.add_option("--sockets", sockets, "CPU sockets reading RAM; --ram-gbps is one socket's (a second adds a measured share, data/speed_efficiency.json)")->capture_default_str();
}

}  // namespace vc::cli
