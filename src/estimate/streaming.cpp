#include "estimate/streaming.h"

#include "core/checked.h"
#include "core/error.h"
#include "estimate/estimate.h"

namespace vc {

StreamEstimate stream_estimate(const Model& model, uint64_t bits_milli, const std::vector<uint64_t>& bandwidths) {
  if (bits_milli == 0 || bits_milli > 64000) throw InputError("--bpw", "must be above 0 and at most 64 bits per weight");
  if (bandwidths.empty() || bandwidths.size() > 32) throw InputError("--gbps", "give 1 to 32 bandwidths, such as 5,19");
  StreamEstimate s;
  s.active_params = model.params.active();
  s.bits_per_weight = static_cast<double>(bits_milli) / 1000.0;
  s.bytes_per_token = mul_div_round(s.active_params, bits_milli, 8000);
  for (uint64_t bw : bandwidths) {
    if (bw == 0) throw InputError("--gbps", "a bandwidth of 0 never delivers a token");
    s.rates.push_back({bw, static_cast<double>(bw) / static_cast<double>(s.bytes_per_token)});
  }
  return s;
}

NativeReads native_reads_per_token(const Model& model) {
  NativeReads r;
  if (model.native.bytes_by_class.empty()) return r;
  uint64_t k = 0, n = 1;
  for (const auto& l : model.layers) {
    if (l.feed_forward.kind == FeedForwardKind::MoE && l.feed_forward.experts) {
      k = l.feed_forward.experts_per_token;
      n = l.feed_forward.experts;
      break;
    }
  }
  uint64_t table_total = 0, always = 0, routed = 0;
  for (const auto& [c, bytes] : model.native.bytes_by_class) {
    table_total = checked_add(table_total, bytes);
    // A tied embedding is also the output head, which decode reads whole (kActiveConvention).
    if (c == ParamClass::Embedding && model.tied_embeddings) always = checked_add(always, bytes);
    if (c == ParamClass::Embedding || c == ParamClass::Vision || c == ParamClass::Mtp || c == ParamClass::Other) continue;
    if (c == ParamClass::RoutedExperts) routed = checked_add(routed, mul_div_round(bytes, k, n));
    else always = checked_add(always, bytes);
  }
  if (table_total == 0) return r;
  // The table may be derived (from the config) while the checkpoint's size is measured: scale.
  r.per_token = mul_div_round(checked_add(always, routed), model.native.bytes, table_total);
  r.routed = mul_div_round(routed, model.native.bytes, table_total);
  return r;
}

StreamEstimate stream_native(const Model& model, const std::vector<uint64_t>& bandwidths) {
  const NativeReads reads = native_reads_per_token(model);
  const uint64_t params = model.params.total();
  if (reads.per_token == 0 || params == 0) {
    const uint64_t bits_milli = params ? mul_div_round(model.native.bytes, 8000, params) : 16000;
    return stream_estimate(model, bits_milli, bandwidths);
  }
  StreamEstimate s = stream_estimate(model, 1000, bandwidths);  // validates the bandwidths
  s.bytes_per_token = reads.per_token;
  s.bits_per_weight = static_cast<double>(reads.per_token) * 8.0 / static_cast<double>(s.active_params);
  s.formula = "tok/s = bandwidth / (each always-active class at its own bytes + k/n of the routed experts' bytes, scaled to the native checkpoint)";
  for (auto& r : s.rates) r.tokens_per_s = static_cast<double>(r.bandwidth_bytes_per_s) / static_cast<double>(s.bytes_per_token);
  return s;
}

StreamEstimate stream_for(const Model& model, const std::string& quant, std::optional<uint64_t> bits_milli,
                          const std::vector<uint64_t>& bandwidths) {
  if (bits_milli) return stream_estimate(model, *bits_milli, bandwidths);
  if (quant.empty() || quant == "native") return stream_native(model, bandwidths);
  const WeightsFigure w = resolve_weights(model, quant);
  if (w.kind == TierKind::Native) return stream_native(model, bandwidths);
  return stream_estimate(model, static_cast<uint64_t>(w.effective_bits * 1000.0 + 0.5), bandwidths);
}

}  // namespace vc
