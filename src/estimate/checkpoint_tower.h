#pragma once
// The estimate's line for a vision tower the checkpoint itself ships (counted from config.json's
// vision_config: sources/config/config_tower.h), split out of the weights: the two lines add up to
// the checkpoint, counted once.
#include <cstdint>
#include <optional>
#include <string>

#include "estimate/estimate.h"

namespace vc {

// The bytes of `weights` that ParamClass::Vision holds (the towers, their projectors, and an audio
// encoder counted with them): exact by class for a native size derived from the config (the class
// at the dtype it is stored in), else by parameters at the tier. nullopt without that class, or
// for a named build (GGUF builds hold the language model alone; the tower ships as an mmproj).
struct TowerShare {
  uint64_t params = 0;
  uint64_t bytes = 0;
  bool exact = false;  // the native checkpoint's per-class table, not a share by parameters
  std::string formula;
};
std::optional<TowerShare> tower_share(const Model& model, const WeightsFigure& weights);

// The tower's share of `weights` (tower_share) on a line of its own. nullopt when the tower is not
// counted from the config (none, or a catalogue entry's stated one), or the tier is a named build.
std::optional<Line> checkpoint_tower_line(const Model& model, const WeightsFigure& weights);

}  // namespace vc
