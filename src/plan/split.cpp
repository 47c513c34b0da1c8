#include "plan/split.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/checked.h"
#include "core/error.h"

namespace vc {
namespace {

uint64_t ceil_share(uint64_t bytes, uint64_t num, uint64_t den) {  // ceil(bytes * num / den)
  const u128 p = static_cast<u128>(bytes) * num;
  const u128 q = p / den + (p % den ? 1 : 0);
  if (q > UINT64_MAX) throw OverflowError("byte count overflows 64 bits (sharding)");
  return static_cast<uint64_t>(q);
}

uint64_t nonrouted(const LayerFootprint& l) { return checked_add(checked_add(l.attention, l.dense), checked_add(l.shared, l.other)); }

// Contiguous layer groups, one per stage, balanced by bytes in proportion to stage capacity:
// a layer goes to the stage whose share of the running total its midpoint falls in.
std::vector<uint64_t> assign_stages(const std::vector<uint64_t>& layer_bytes, uint64_t head, uint64_t tail, const std::vector<uint64_t>& capacity) {
  u128 total = static_cast<u128>(head) + tail;
  for (uint64_t b : layer_bytes) total += b;
  u128 cap_sum = 0;
  for (uint64_t c : capacity) cap_sum += c;
  std::vector<u128> bound;
  u128 cum_cap = 0;
  for (uint64_t c : capacity) {
    cum_cap += c;
    bound.push_back(cap_sum ? total * cum_cap / cap_sum : total);
  }
  std::vector<uint64_t> stage(layer_bytes.size(), 0);
  u128 cum = head;
  std::size_t s = 0;
  for (std::size_t i = 0; i < layer_bytes.size(); ++i) {
    const u128 mid2 = 2 * cum + layer_bytes[i];  // twice the midpoint, to stay in integers
    while (s + 1 < capacity.size() && mid2 >= 2 * bound[s]) ++s;
    stage[i] = s;
    cum += layer_bytes[i];
  }
  return stage;
}

std::string layer_range(uint64_t first, uint64_t last) {  // 1-indexed for people
  return first == last ? fmt::format("layer {}", first + 1) : fmt::format("layers {}-{}", first + 1, last + 1);
}

}  // namespace

const char* to_string(SplitMode mode) {
  switch (mode) {
    case SplitMode::Layer: return "layer";
    case SplitMode::Pipeline: return "pp";
    case SplitMode::Tensor: return "tp";
    case SplitMode::Expert: return "ep";
    case SplitMode::TensorExpert: return "tp+ep";
  }
  return "layer";
}

SplitMode parse_split(const std::string& text, const std::string& subject) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "layer" || s == "layers") return SplitMode::Layer;
  if (s == "pp" || s == "pipeline") return SplitMode::Pipeline;
  if (s == "tp" || s == "tensor") return SplitMode::Tensor;
  if (s == "ep" || s == "expert") return SplitMode::Expert;
  if (s == "tp+ep" || s == "tpep" || s == "tp-ep") return SplitMode::TensorExpert;
  throw InputError(subject, "'" + text + "' is not a split; accepted: layer, pp, tp, ep, tp+ep");
}

SplitResult split(const SplitInput& in) {
  const Footprint& f = *in.footprint;
  const Box& box = *in.box;
  if (box.gpus.empty()) throw InputError("--gpu", "a split needs at least one device; without GPUs use the offload plan");
  const uint64_t per_node = box.gpus.size();
  const uint64_t count = box.device_count();
  const std::size_t n = f.layers.size();

  SplitResult r;
  // Stage layout: how many layer groups, and how many tensor/expert ranks share each.
  uint64_t stages = count, ranks = 1;
  switch (in.mode) {
    case SplitMode::Layer:
    case SplitMode::Pipeline: stages = count; ranks = 1; break;
    case SplitMode::Tensor: stages = box.nodes; ranks = per_node; break;
    case SplitMode::Expert:
    case SplitMode::TensorExpert: stages = 1; ranks = count; break;
  }
  r.pp = stages;
  r.tp = in.mode == SplitMode::Tensor ? ranks : in.mode == SplitMode::TensorExpert ? ranks : 1;
  r.ep = (in.mode == SplitMode::Expert || in.mode == SplitMode::TensorExpert) ? ranks : 1;
  r.dp = in.mode == SplitMode::Expert ? ranks : 1;

  std::vector<DeviceShare> devs(count);
  for (uint64_t i = 0; i < count; ++i) {
    const Device& d = box.gpus[i % per_node];
    devs[i].device = d.name;
    devs[i].node = i / per_node;
    devs[i].rank = i;
    devs[i].stage = i / ranks;
    devs[i].capacity = d.memory_bytes;
    devs[i].bandwidth = d.bandwidth;
    devs[i].bf16_tflops = d.bf16_tflops;
  }

  std::vector<uint64_t> layer_bytes(n), stage_cap(stages, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& l = f.layers[i];
    layer_bytes[i] = checked_add(checked_add(l.weights(), l.cache(in.context, in.sequences)), l.state(in.sequences));
  }
  for (uint64_t i = 0; i < count; ++i) stage_cap[devs[i].stage] = checked_add(stage_cap[devs[i].stage], devs[i].capacity);
  const std::vector<uint64_t> stage_of = assign_stages(layer_bytes, checked_add(f.embedding, f.first_extras), checked_add(f.output_head, f.last_extras), stage_cap);

  const bool tensor = in.mode == SplitMode::Tensor || in.mode == SplitMode::TensorExpert;
  const bool expert = in.mode == SplitMode::Expert || in.mode == SplitMode::TensorExpert;
  r.kv_heads_per_rank = 0;
  std::vector<uint64_t> read_weights(count, 0);  // unscaled weight bytes read per token
  for (uint64_t di = 0; di < count; ++di) {
    DeviceShare& d = devs[di];
    const uint64_t rank = di % ranks;
    const uint64_t seqs = in.mode == SplitMode::Expert ? in.sequences / ranks + (rank < in.sequences % ranks ? 1 : 0) : in.sequences;
    const uint64_t one_seq = in.mode == SplitMode::Expert ? (rank == 0 ? 1 : 0) : 1;  // the sequence we time lives on rank 0
    auto tp_div = [&](uint64_t bytes) { return tensor ? ceil_share(bytes, 1, ranks) : bytes; };
    std::vector<std::string> holds;
    int64_t first = -1, last = -1;
    uint64_t cache_one = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (stage_of[i] != d.stage) continue;
      const auto& l = f.layers[i];
      if (first < 0) first = static_cast<int64_t>(i);
      last = static_cast<int64_t>(i);
      // Routed experts: divided by expert count across expert ranks, else by tensor rank.
      uint64_t routed = l.routed, routed_read = 0;
      if (expert && l.experts) {
        const uint64_t mine = l.experts / ranks + (rank < l.experts % ranks ? 1 : 0);
        routed = ceil_share(l.routed, mine, l.experts);
        // a token picks k of n experts; k x mine / n of them are expected here, n-th of the bytes each
        routed_read = ceil_share(l.routed, checked_mul(l.experts_per_token, mine), checked_mul(l.experts, l.experts));
      } else {
        routed = tp_div(l.routed);
        routed_read = l.experts ? ceil_share(routed, l.experts_per_token, l.experts) : routed;
      }
      const uint64_t other = expert && !tensor ? nonrouted(l) : tp_div(nonrouted(l));
      d.weights = checked_add(d.weights, checked_add(other, routed));
      read_weights[di] = checked_add(read_weights[di], checked_add(other, routed_read));
      // Cache: kv heads divided by tensor rank, one kept per rank when fewer heads than ranks;
      // latent caches whole on every rank; recurrent state heads divided.
      uint64_t c = l.cache(in.context, seqs), c1 = l.cache(in.context, one_seq);
      if (tensor && (l.kind == AttentionKind::Full || l.kind == AttentionKind::SlidingWindow) && l.kv_heads) {
        const uint64_t heads = l.kv_heads >= ranks ? ceil_div(l.kv_heads, ranks) : 1;
        if (l.kv_heads < ranks) r.kv_replicated = true;
        r.kv_heads_per_rank = std::max(r.kv_heads_per_rank, heads);
        c = ceil_share(c, heads, l.kv_heads);
        c1 = ceil_share(c1, heads, l.kv_heads);
      } else if (tensor && l.kind == AttentionKind::Latent && ranks > 1) {
        r.latent_replicated = true;
      } else if (tensor) {
        c = tp_div(c);
        c1 = tp_div(c1);
      }
      d.cache = checked_add(d.cache, c);
      cache_one = checked_add(cache_one, c1);
      const uint64_t s = tensor ? tp_div(l.state(seqs)) : l.state(seqs);
      d.state = checked_add(d.state, s);
      cache_one = checked_add(cache_one, tensor ? tp_div(l.state(one_seq)) : l.state(one_seq));
    }
    const bool first_stage = d.stage == 0, last_stage = d.stage + 1 == stages;
    const bool replicate = expert && !tensor;
    if (first_stage && (replicate || tensor || rank == 0)) {
      d.weights = checked_add(d.weights, tp_div(checked_add(f.embedding, f.first_extras)));
      holds.push_back("embeddings");
    }
    if (first >= 0) holds.push_back(layer_range(static_cast<uint64_t>(first), static_cast<uint64_t>(last)));
    if (last_stage && (replicate || tensor || rank + 1 == ranks)) {
      d.weights = checked_add(d.weights, tp_div(checked_add(f.output_head, f.last_extras)));
      read_weights[di] = checked_add(read_weights[di], tp_div(f.output_head));
      holds.push_back("output head");
    }
    if (tensor) holds.push_back(fmt::format("1/{} of each tensor", ranks));
    if (expert) holds.push_back(fmt::format("experts rank {}/{}", rank + 1, ranks));
    for (const auto& h : holds) d.holds += (d.holds.empty() ? "" : ", ") + h;
    const uint64_t base = checked_add(checked_add(d.weights, d.cache), d.state);
    d.overhead = checked_add(mul_div_round(base, f.overhead_bp, 10000), in.per_device_fixed);
    d.total = checked_add(base, d.overhead);
    d.read_per_token = cache_one;
  }
  // Weight bytes read per token follow the vendor's active / total rule (footprint): scale by the
  // ratio of the rule's bytes to what one copy of the model reads by the layer arithmetic.
  u128 one_copy = f.output_head;
  for (const auto& l : f.layers) {
    one_copy += nonrouted(l);
    one_copy += l.experts ? static_cast<u128>(l.routed) * l.experts_per_token / l.experts : l.routed;
  }
  for (uint64_t di = 0; di < count; ++di) {
    const u128 scaled = one_copy ? static_cast<u128>(read_weights[di]) * f.active_bytes / one_copy : 0;
    devs[di].read_per_token = checked_add(devs[di].read_per_token, static_cast<uint64_t>(scaled));
  }

  r.devices = std::move(devs);
  r.all_fit = true;
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    if (!r.devices[i].fits()) r.all_fit = false;
    if (r.devices[i].headroom() < r.devices[r.busiest].headroom()) r.busiest = i;
  }
  return r;
}

}  // namespace vc
