#pragma once
// MODEL arguments: a catalogue id or name, a config.json, a model folder (config.json with
// *.safetensors or an index), a .safetensors or .gguf file (split sets too), an http(s):// URL
// of any of those, or hf:ORG/REPO[@REVISION][/FILE]. Checkpoints are read from headers only.
#include <string>

#include "model/model.h"

namespace vc {

Model resolve_model(const std::string& spec, const std::string& subject = "MODEL");

}  // namespace vc
