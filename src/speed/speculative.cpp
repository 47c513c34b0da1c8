#include "speed/speculative.h"
#include "speed/speculative_verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "catalogue/catalogue.h"
#include "core/error.h"

namespace vc {
namespace {

constexpr const char* kLeviathan = "Leviathan, Kalman, Matias, Fast Inference from Transformers via Speculative Decoding (ICML 2023), https://arxiv.org/abs/2211.17192";
// DeepSeek-V3 Technical Report, section 5.4.3: "the acceptance rate of the second token prediction
// ranges between 85% and 90%" (one MTP module, k = 1).
constexpr double kMtpAcceptance = 0.85;
constexpr const char* kMtpAcceptanceSource = "DeepSeek-V3 Technical Report, 5.4.3 (MTP acceptance 85-90%; the low end), https://arxiv.org/abs/2412.19437";

}  // namespace

double tokens_per_step(double a, uint32_t k) {
  if (a >= 1.0) return static_cast<double>(k) + 1.0;
  return (1.0 - std::pow(a, static_cast<double>(k) + 1.0)) / (1.0 - a);
}

std::pair<double, std::string> speculative_acceptance(const SpeculativeSettings& s) {
  if (s.acceptance) {
    if (!(*s.acceptance > 0 && *s.acceptance <= 1)) throw InputError("--spec-acceptance", fmt::format("{} is not a share above 0 and at most 1 (e.g. 0.7)", *s.acceptance));
    return {*s.acceptance, "given"};
  }
  if (s.method == "mtp") return {kMtpAcceptance, kMtpAcceptanceSource};
  throw InputError("--spec-acceptance", "speculative method '" + s.method +
                                            "' has no published acceptance that fits every model pair; give the share of drafted tokens the target accepts (e.g. 0.7)");
}

double head_draft_seconds(const SpeedEstimate& target, const TokenReads& reads, uint64_t head_bytes) {
  uint64_t weights = 0;
  for (const auto& m : reads.memories) weights += m.weights_read;
  if (!weights || !reads.layers) return 0;
  const double layer = static_cast<double>(weights > head_bytes ? weights - head_bytes : 0) / reads.layers;
  return target.seconds * (layer + static_cast<double>(head_bytes)) / static_cast<double>(weights);
}

double drafter_seconds(const SpeculativeSettings& s, const Model& target, const Footprint& f, const Scenario& scenario, const Box& box,
                       const SpeedSettings& settings, const TokenReads& target_reads, const SpeedEstimate& target_estimate) {
  if (s.method != "draft") {
    const uint64_t head = target.tied_embeddings && f.output_head == 0 ? f.embedding : f.output_head;
    return head_draft_seconds(target_estimate, target_reads, head);
  }
  if (s.draft_model.empty()) throw InputError("--spec-draft", "the draft method needs the draft model's catalogue id (e.g. qwen3-0.6b)");
  const Model* draft = Catalogue::builtin().find(s.draft_model);
  if (!draft) throw InputError("--spec-draft", "'" + s.draft_model + "' is not in the catalogue (see `vramcalc models`)");
  const Estimate e = estimate(*draft, scenario);
  const Footprint df = make_footprint(*draft, e);
  SpeedSettings ds = settings;
  ds.llamacpp.n_gpu_layers = 1u << 20;
  ds.llamacpp.overrides.clear();
  return decode_speed(token_reads(*draft, df, box, ds)).seconds;
}

SpeedEstimate verify_step(const SpeedEstimate& target, const Footprint& f, const TokenReads& reads, uint32_t positions) {
  SpeedEstimate v = target;
  uint64_t weights = 0;
  for (const auto& m : reads.memories) weights += m.weights_read;
  double routed = 0, extra = 0;
  for (const auto& l : f.layers) {
    if (!l.experts || !l.routed || !l.experts_per_token) continue;
    const double n = l.experts, k = std::min<double>(l.experts_per_token, n);
    const double one = static_cast<double>(l.routed) * k / n;
    const double distinct = n * (1.0 - std::pow(1.0 - k / n, positions));
    routed += one;
    extra += one * (distinct / k - 1.0);
  }
  if (!weights || extra <= 0 || target.seconds <= 0) return v;
  const double factor = 1.0 + extra / static_cast<double>(weights);
  v.seconds = target.seconds * factor;
  v.formula = fmt::format("{:.2f} ms x {:.2f}: the {} positions read the union of their routed experts (+{:.0f}% routed bytes over {:.0f}% of the reads); plain step: {}",
                          target.seconds * 1e3, factor, positions, 100.0 * extra / routed, 100.0 * routed / static_cast<double>(weights), target.formula);
  return v;
}

SpeedEstimate speculative_decode(const SpeedEstimate& target, double draft_seconds, const SpeculativeSettings& s) {
  if (s.method != "mtp" && s.method != "eagle" && s.method != "draft")
    throw InputError("--spec-method", "'" + s.method + "': accepted: " + kSpeculativeMethods);
  if (s.tokens == 0 || s.tokens > 64) throw InputError("--spec-tokens", "must be 1 to 64 drafted tokens per step");
  const auto [a, a_source] = speculative_acceptance(s);
  SpeedEstimate e = target;
  if (target.seconds <= 0) return e;
  const double per_step = tokens_per_step(a, s.tokens);
  const double step = s.tokens * draft_seconds + target.seconds;
  e.seconds = step / per_step;
  e.tok_s = per_step / step;
  const double gain = e.tok_s / target.tok_s;
  e.low = target.low * gain;
  e.high = target.high * gain;
  e.formula = fmt::format("tok/s = E / (k x draft + verify) = {:.2f} / ({} x {:.2f} ms + {:.2f} ms) = {:.2f} tok/s; E = (1 - a^(k+1)) / (1 - a) with a = {:.2f}, k = {}; "
                          "verify = the target's step ({})",
                          per_step, s.tokens, draft_seconds * 1e3, target.seconds * 1e3, e.tok_s, a, s.tokens, target.formula);
  const std::string drafter = s.method == "draft" ? "the draft model " + s.draft_model + "'s own decode step on the same devices"
                                                  : "one decoder layer plus the output head (the " + s.method + " head), read where the target reads them";
  e.assumption = fmt::format("speculative decoding ({}, {} drafted tokens per step): each drafted token is accepted with probability {:.2f} ({}), independently; "
                             "the verify pass reads the target's dense weights once for all {} positions (an MoE's routed experts once per distinct expert the positions pick, routing taken as uniform); a drafted token costs {}; {}",
                             s.method, s.tokens, a, a_source == "given" ? "as given" : "published default", s.tokens + 1, drafter, target.assumption);
  e.source = fmt::format("{}; acceptance: {}; {}", kLeviathan, a_source == "given" ? "the user's" : a_source, target.source);
  return e;
}

}  // namespace vc
