#pragma once
// One mapper per architecture family: each reads a config.json into the common Model structure
// (layers, params, native checkpoint). The table in config_mapper.cpp maps model_type -> mapper.
#include "sources/config/config_view.h"

namespace vc::families {

void map_kimi_linear(ConfigView& cfg);  // kimi_linear, kimi_k3: KDA + MLA (+ index keys) + MoE

}  // namespace vc::families
