#include "estimate/checkpoint_tower.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "core/units.h"
#include "sources/config/config_tower.h"

namespace vc {

std::optional<TowerShare> tower_share(const Model& m, const WeightsFigure& w) {
  const auto params = m.params.by_class.find(ParamClass::Vision);
  if (params == m.params.by_class.end() || w.kind == TierKind::Build || m.params.total() == 0) return std::nullopt;
  const auto by_class = m.native.bytes_by_class.find(ParamClass::Vision);
  // The native checkpoint's per-class table gives the tower at the dtype it is stored in; a measured
  // checkpoint (a file listing) keeps that figure and leaves the rest of its bytes to the language
  // model, since the tower's dtype is known where the experts' packing may not be to the byte.
  TowerShare s;
  s.params = params->second;
  s.exact = w.kind == TierKind::Native && by_class != m.native.bytes_by_class.end() && by_class->second <= w.bytes;
  s.bytes = s.exact ? by_class->second : mul_div_round(w.bytes, s.params, m.params.total());
  s.formula = s.exact ? fmt::format("{} params at the checkpoint's {} = {} B", format_count(s.params), m.native.format, format_count(s.bytes))
                      : fmt::format("{} B x {} tower params / {} params = {} B", format_count(w.bytes), format_count(s.params),
                                    format_count(m.params.total()), format_count(s.bytes));
  return s;
}

std::optional<Line> checkpoint_tower_line(const Model& m, const WeightsFigure& w) {
  if (!tower_from_config(m)) return std::nullopt;
  const std::optional<TowerShare> s = tower_share(m, w);
  if (!s) return std::nullopt;
  Line l;
  l.id = "weights.vision";
  // An audio encoder the config also holds (Qwen2.5-Omni's thinker) is counted in the same class.
  const auto audio = m.provenance.find("params.audio");
  l.label = fmt::format("{} ({} params)", audio == m.provenance.end() ? "Vision tower and projector" : "Vision tower, audio encoder and projectors",
                        format_params(s->params));
  l.bytes = s->bytes;
  l.formula = s->formula;
  l.assumption = "part of the checkpoint: vLLM and SGLang load it with the weights; llama.cpp loads a tower only from an --mmproj file";
  l.source = m.provenance.at("params.vision") + (audio == m.provenance.end() ? "" : "; " + audio->second);
  return l;
}

}  // namespace vc
