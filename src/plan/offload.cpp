#include "plan/offload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"

namespace vc {

double zipf_mass(uint64_t hot, uint64_t n, double s) {
  if (n == 0) return 0;
  hot = std::min(hot, n);
  double part = 0, all = 0;
  for (uint64_t i = 1; i <= n; ++i) {
    const double w = std::pow(static_cast<double>(i), -s);
    all += w;
    if (i <= hot) part += w;
  }
  return part / all;
}

namespace {

// What to do about weights that fit in no tier: stream them from disk where the engine can.
std::string ssd_hint(const Box& box, const OffloadOptions& o) {
  if (!o.ssd_streaming)
    return fmt::format(" ({} keeps every weight in GPU or host memory and cannot stream from disk: give more --ram or GPUs, or a smaller tier)",
                       o.no_ssd_engine.empty() ? "this engine" : o.no_ssd_engine);
  return box.ssd_bandwidth ? "" : " (give --ssd-gbps to stream weights from disk)";
}

}  // namespace

OffloadPlan offload_plan(const Footprint& f, const Box& box, const OffloadOptions& o, uint64_t context, uint64_t sequences) {
  if (!(o.skew >= 0 && o.skew <= 4)) throw InputError("--expert-skew", "must be from 0 (uniform) to 4");
  if (o.efficiency_bp == 0 || o.efficiency_bp > 10000) throw InputError("--efficiency", "must be above 0% and at most 100%");
  OffloadPlan p;
  p.skew = o.hot_cache ? o.skew : 0.0;
  p.hot_cache = o.hot_cache;
  p.efficiency_bp = o.efficiency_bp;

  // Tiers. GPU: every device pooled (layer split); what the overhead percentage and the
  // per-process context leave. Decode walks the devices in turn, so the pool's bandwidth is the
  // capacity-weighted harmonic mean of theirs.
  std::vector<TierUse> tiers;
  if (!box.gpus.empty()) {
    TierUse g;
    g.tier = "GPU";
    uint64_t cap = box.vram_bytes();
    const uint64_t fixed = checked_mul(o.per_device_fixed, box.device_count());
    cap = cap > fixed ? cap - fixed : 0;
    g.capacity = mul_div_round(cap, 10000, 10000 + f.overhead_bp);
    double inv = 0;
    bool known = true;
    for (const auto& d : box.gpus) {
      if (d.bandwidth == 0) known = false;  // a detected card missing from the table
      else inv += static_cast<double>(d.memory_bytes) / static_cast<double>(box.vram_bytes() / box.nodes) / static_cast<double>(d.bandwidth);
    }
    g.bandwidth = known && inv > 0 ? static_cast<uint64_t>(1.0 / inv) : 0;
    tiers.push_back(g);
  }
  {
    TierUse r;
    r.tier = "RAM";
    r.capacity = checked_mul(box.ram_bytes, box.nodes);
    r.bandwidth = box.ram_bandwidth;
    tiers.push_back(r);
  }
  if (box.ssd_bandwidth && o.ssd_streaming) {
    TierUse s;
    s.tier = "SSD";
    s.capacity = UINT64_MAX;
    s.bandwidth = box.ssd_bandwidth;
    tiers.push_back(s);
  }
  std::vector<uint64_t> free(tiers.size());
  for (std::size_t i = 0; i < tiers.size(); ++i) free[i] = tiers[i].capacity;

  // Places `bytes` into the fastest tiers with room (cache may not go to SSD); returns the bytes per tier.
  auto place = [&](uint64_t bytes, bool allow_ssd, const char* what) {
    std::vector<uint64_t> got(tiers.size(), 0);
    for (std::size_t i = 0; i < tiers.size() && bytes; ++i) {
      if (tiers[i].tier == "SSD" && !allow_ssd) continue;
      const uint64_t take = std::min(bytes, free[i]);
      got[i] = take;
      free[i] -= take;
      bytes -= take;
    }
    if (bytes) {
      p.fits = false;
      if (p.why.empty()) {
        p.why = fmt::format("{} of {} do not fit in {}", format_bytes(bytes), what, box.gpus.empty() ? "RAM" : "GPU and RAM");
        if (allow_ssd) p.why += ssd_hint(box, o);
        if (!allow_ssd) p.why += " (cache and state stay in memory; give more --ram or GPUs)";
      }
    }
    return got;
  };

  uint64_t cache = 0, cache_one = 0, hot = 0, routed = 0;
  for (const auto& l : f.layers) {
    cache = checked_add(cache, checked_add(l.cache(context, sequences), l.state(sequences)));
    cache_one = checked_add(cache_one, checked_add(l.cache(context, 1), l.state(1)));
    hot = checked_add(hot, checked_add(checked_add(l.attention, l.dense), checked_add(l.shared, l.other)));
    routed = checked_add(routed, l.routed);
  }
  hot = checked_add(hot, f.output_head);
  const uint64_t cold = checked_add(checked_add(f.embedding, f.first_extras), f.last_extras);

  const auto cache_at = place(cache, false, "cache and state");
  const auto hot_at = place(hot, true, "always-active weights");
  // Routed experts by expert index: one "slot" is one expert in every MoE layer.
  uint64_t n = 0;
  for (const auto& l : f.layers) n = std::max<uint64_t>(n, l.experts);
  p.experts = n;
  p.expert_slot = n ? routed / n : 0;
  std::vector<uint64_t> experts_at(tiers.size(), 0), slots_at(tiers.size(), 0);
  uint64_t slots_left = n, routed_left = routed;
  for (std::size_t i = 0; i < tiers.size() && routed_left; ++i) {
    uint64_t slots = p.expert_slot ? std::min(slots_left, free[i] / p.expert_slot) : 0;
    uint64_t bytes = std::min(routed_left, checked_mul(slots, p.expert_slot));
    if (tiers[i].tier == "SSD" || slots == slots_left) bytes = std::min(routed_left, free[i]), slots = slots_left;
    slots_at[i] = slots;
    experts_at[i] = bytes;
    free[i] -= bytes;
    slots_left -= slots;
    routed_left -= bytes;
  }
  if (routed_left) {
    p.fits = false;
    if (p.why.empty()) p.why = fmt::format("{} of routed experts do not fit in GPU and RAM{}", format_bytes(routed_left), ssd_hint(box, o));
  }
  const auto cold_at = place(cold, true, "embeddings and other cold tensors");

  // Reads per token.
  const uint64_t hot_active = f.active_bytes > f.routed_active_bytes ? f.active_bytes - f.routed_active_bytes : 0;
  uint64_t served = 0;
  double mass_before = 0;
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    TierUse& t = tiers[i];
    t.cache = cache_at[i];
    t.weights = checked_add(hot_at[i], cold_at[i]);
    t.experts = experts_at[i];
    t.experts_per_layer = slots_at[i];
    served += slots_at[i];
    const double mass = n ? zipf_mass(served, n, p.skew) : 0;
    t.hit_rate = mass - mass_before;
    mass_before = mass;
    t.read_cache = cache ? static_cast<uint64_t>(static_cast<u128>(cache_one) * cache_at[i] / cache) : 0;
    const uint64_t hot_read = hot ? static_cast<uint64_t>(static_cast<u128>(hot_active) * hot_at[i] / hot) : 0;
    t.read_weights = checked_add(hot_read, static_cast<uint64_t>(std::llround(static_cast<double>(f.routed_active_bytes) * t.hit_rate)));
    const uint64_t read = checked_add(t.read_weights, t.read_cache);
    if (read && t.bandwidth == 0 && t.tier == "GPU") {
      p.speed_unknown = true;  // fit still holds; speed needs the card's bandwidth (--gpu NAME)
      continue;
    }
    if (read && t.bandwidth == 0) throw InputError(t.tier == "RAM" ? "--ram-gbps" : "--ssd-gbps", "the plan reads from " + t.tier + " but its bandwidth is 0");
    if (read) {
      t.seconds = static_cast<double>(read) / static_cast<double>(t.bandwidth);
      p.weights_seconds += static_cast<double>(t.read_weights) / static_cast<double>(t.bandwidth);
      p.seconds += t.seconds;
    }
  }
  p.tiers = std::move(tiers);
  p.upper_tok_s = p.seconds > 0 && !p.speed_unknown ? 1.0 / p.seconds : 0;
  p.expected_tok_s = p.upper_tok_s * o.efficiency_bp / 10000.0;
  std::string terms;
  for (const auto& t : p.tiers) {
    if (t.read_weights + t.read_cache == 0) continue;
    terms += fmt::format("{}{} / {} GB/s ({})", terms.empty() ? "" : " + ", format_bytes(t.read_weights + t.read_cache), format_grouped(static_cast<double>(t.bandwidth) / 1e9, 1), t.tier);
  }
  p.formula = fmt::format("s/token = {} = {:.4f} s; upper bound {:.2f} tok/s; expected × {} = {:.2f} tok/s", terms, p.seconds, p.upper_tok_s,
                          format_percent_bp(o.efficiency_bp), p.expected_tok_s);
  return p;
}

}  // namespace vc
