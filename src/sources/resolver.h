#pragma once
// MODEL arguments: a catalogue id or name, or a path to a config.json (or a directory holding one).
#include <string>

#include "model/model.h"

namespace vc {

Model resolve_model(const std::string& spec, const std::string& subject = "MODEL");

}  // namespace vc
