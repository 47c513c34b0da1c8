#pragma once
// The native checkpoint's format and size derived from config.json: dtype for unquantized tensors,
// quantization_config for the rest (which parameter classes it covers, at what bits per weight).
// A measured size from the real files (catalogue facts, safetensors headers) replaces it.
#include "sources/config/config_view.h"

namespace vc {

void apply_native_checkpoint(ConfigView& cfg);

}  // namespace vc
