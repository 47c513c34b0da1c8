#include "model/model.h"

#include <algorithm>
#include <cctype>

#include "core/checked.h"
#include "core/units.h"

namespace vc {

const char* to_string(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::Full: return "full";
    case AttentionKind::SlidingWindow: return "sliding_window";
    case AttentionKind::Latent: return "latent";
    case AttentionKind::LinearState: return "linear_state";
    case AttentionKind::None: return "none";
  }
  return "none";
}

const char* to_string(StateFamily family) {
  switch (family) {
    case StateFamily::KDA: return "KDA";
    case StateFamily::GatedDeltaNet: return "GatedDeltaNet";
    case StateFamily::Mamba2: return "Mamba2";
    case StateFamily::Mamba1: return "Mamba1";
    case StateFamily::Unknown: return "linear";
  }
  return "linear";
}

uint64_t LayerConfig::param_count() const {
  uint64_t n = 0;
  for (const auto& [c, v] : params) n = checked_add(n, v);
  return n;
}

const char* to_string(ParamClass c) {
  switch (c) {
    case ParamClass::Embedding: return "embedding";
    case ParamClass::OutputHead: return "output_head";
    case ParamClass::Attention: return "attention";
    case ParamClass::DenseMlp: return "dense_mlp";
    case ParamClass::RoutedExperts: return "routed_experts";
    case ParamClass::SharedExperts: return "shared_experts";
    case ParamClass::Router: return "router";
    case ParamClass::Norms: return "norms";
    case ParamClass::Vision: return "vision";
    case ParamClass::Mtp: return "mtp";
    case ParamClass::Other: return "other";
  }
  return "other";
}

const char* to_string(ReleaseStatus s) {
  switch (s) {
    case ReleaseStatus::Released: return "released";
    case ReleaseStatus::Announced: return "announced";
    case ReleaseStatus::Withdrawn: return "withdrawn";
  }
  return "released";
}

std::string status_text(ReleaseStatus s) {
  switch (s) {
    case ReleaseStatus::Released: return "released";
    case ReleaseStatus::Announced: return "announced, weights unavailable";
    case ReleaseStatus::Withdrawn: return "withdrawn, weights no longer published";
  }
  return "released";
}

namespace {
std::string with_vendor(uint64_t used, const std::optional<StatedFigure>& stated) {
  std::string out = format_params(used);
  if (stated && format_params(stated->value) != out) out += " (vendor: " + format_params(stated->value) + ")";
  return out;
}
}  // namespace

uint64_t Checkpoint::download_bytes() const { return checked_add(bytes, copy_bytes); }

std::string Params::total_text() const { return with_vendor(total(), stated_total); }
std::string Params::active_text() const { return with_vendor(active(), stated_active); }

std::string Params::active_parts_text() const {
  std::string out;
  for (const auto& [c, n] : active_by_class) out += (out.empty() ? "" : " + ") + std::string(to_string(c)) + " " + format_params(n);
  return out;
}

uint64_t Model::layer_count(AttentionKind kind) const {
  return static_cast<uint64_t>(std::count_if(layers.begin(), layers.end(), [&](const LayerConfig& l) {
    return l.attention.kind == kind || (l.parallel_mixer && l.parallel_mixer->kind == kind);
  }));
}

const Build* Model::find_build(const std::string& wanted) const {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const auto& b : builds) if (lower(b.name) == lower(wanted)) return &b;
  return nullptr;
}

}  // namespace vc
