#pragma once
// The hardware and plan flags `plan` and `check` share: GPUs, nodes, RAM, SSD, split, engine,
// efficiencies and the hot-expert model.
#include <CLI/CLI.hpp>
#include <string>

#include "plan/hardware.h"
#include "plan/plan.h"

namespace vc::cli {

struct BoxFlags {
  std::string gpu = "none";
  std::string nodes = "1";
  std::string ram = "0";
  std::string ram_gbps = "80";
  std::string ssd_gbps = "0";
  std::string split = "layer";
  std::string engine = "generic";
  std::string per_device = "auto";
  std::string efficiency = "60%";
  std::string compute_efficiency = "40%";
  std::string expert_skew = "1.0";
  std::string hot_cache = "on";

  void add_to(CLI::App& app, bool with_split = true);
  Box to_box() const;
  PlanOptions to_options() const;
};

}  // namespace vc::cli
