#include "cli/extras_flags.h"

#include "cli/input_options.h"

namespace vc::cli {

void ExtrasFlags::add_to(CLI::App& app) {
  add_input_options<ExtrasInputs>(app, *this, fields());
  app.add_option("--lora", loras, "LoRA adapter file (GGUF or safetensors); repeat for several");
}

}  // namespace vc::cli
