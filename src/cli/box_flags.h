#pragma once
// The hardware and plan flags `plan` and `check` share: GPUs, nodes, RAM, SSD, split, engine,
// efficiencies and the hot-expert model.
#include <CLI/CLI.hpp>
#include <string>

#include "plan/box_inputs.h"

namespace vc::cli {

// The strings live in BoxInputs (src/plan/), which the API parses too.
struct BoxFlags : BoxInputs {
  void add_to(CLI::App& app, bool with_split = true);
};

}  // namespace vc::cli
