#pragma once
// Reads a whole small file (config.json, model.safetensors.index.json) through an Opener,
// refusing anything larger than `max_bytes`.
#include <string>

#include "sources/io/opener.h"

namespace vc {

std::string read_small_text(const std::string& location, const Opener& open, uint64_t max_bytes);

}  // namespace vc
