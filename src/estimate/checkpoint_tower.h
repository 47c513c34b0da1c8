#pragma once
// The estimate's line for a vision tower the checkpoint itself ships (counted from config.json's
// vision_config: sources/config/config_tower.h), split out of the weights: the two lines add up to
// the checkpoint, counted once.
#include <optional>

#include "estimate/estimate.h"

namespace vc {

// The tower's share of `weights`: exact by class for a native size derived from the config, else
// by parameters at the tier. nullopt when the tower is not counted from the config (none, or a
// catalogue entry's stated one), or the tier is a named build (GGUF builds ship the tower as a
// separate mmproj).
std::optional<Line> checkpoint_tower_line(const Model& model, const WeightsFigure& weights);

}  // namespace vc
