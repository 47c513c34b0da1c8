#pragma once
// The CLI face of ExtrasInputs (estimate/extras_inputs.h): --mmproj, --images, --draft, --lora.
#include <CLI/CLI.hpp>

#include "estimate/extras_inputs.h"

namespace vc::cli {

struct ExtrasFlags : ExtrasInputs {
  void add_to(CLI::App& app);
};

}  // namespace vc::cli
