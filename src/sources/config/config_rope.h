#pragma once
// The rotary position embedding a config.json asks for (Model::rope): rope_scaling, or
// transformers v5's rope_parameters (per layer type, {"full_attention": {...}, ...}: the full
// layers' entry), and partial_rotary_factor (top level or inside that entry). Read for every
// family before its mapper runs, so a mapper may refine it (Gemma 3's sliding layers).
#include "sources/config/config_view.h"

namespace vc {

// InputError (through ConfigView::fail) for a factor that is not a positive finite number up to
// 1,000,000, a partial_rotary_factor outside (0, 1], or a rope type that is not a string.
void read_rope(ConfigView& cfg);

}  // namespace vc
