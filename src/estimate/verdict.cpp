#include "estimate/verdict.h"

#include <fmt/format.h>

#include "core/checked.h"
#include "core/units.h"

namespace vc {
namespace {

std::string gb(uint64_t bytes) { return format_grouped(to_gb(bytes), 0) + " GB"; }

}  // namespace

Verdict make_verdict(const Estimate& e) {
  Verdict v;
  const uint64_t total = e.total_bytes;
  for (uint64_t size : kVerdictCardSizes) {
    uint64_t cards = ceil_div(total, size);
    v.cards.push_back({size, cards, ceil_div(cards, kCardsPerNode)});
  }
  v.common_box_bytes = kCardsPerNode * 80'000'000'000ull;
  v.common_box_shortfall = static_cast<int64_t>(total) - static_cast<int64_t>(v.common_box_bytes);

  const uint64_t context = e.context_bytes();
  v.context_share_bp = total ? static_cast<uint32_t>(mul_div_round(context, 10000, total)) : 0;
  if (e.weights.bytes >= e.cache_bytes && e.weights.bytes >= e.state_bytes) v.dominant = "weights";
  else v.dominant = e.cache_bytes >= e.state_bytes ? "cache" : "state";

  const CardCount& c24 = v.cards[0];
  const CardCount& c80 = v.cards[1];
  const CardCount& c192 = v.cards[3];
  const uint64_t node192 = kCardsPerNode * kVerdictCardSizes[3];
  if (total <= kVerdictCardSizes[0]) v.headline = "This fits on one 24 GB consumer card.";
  else if (total <= kVerdictCardSizes[1]) v.headline = "This needs one 80 GB card, or several consumer cards split by layer.";
  else if (total <= kVerdictCardSizes[3]) v.headline = "This fits one large datacenter card (141 or 192 GB).";
  else if (total <= v.common_box_bytes) v.headline = "This fits one node of eight 80 GB cards.";
  else if (total <= node192) v.headline = "This needs one node of eight large cards (141 or 192 GB).";
  else v.headline = "Treat this as a multi-node model.";

  std::string t = v.headline;
  const std::string scenario = fmt::format("at {} context{}", format_tokens(e.scenario.context),
                                           e.scenario.sequences > 1 ? fmt::format(" and {} concurrent sequences", e.scenario.sequences) : "");
  if (v.common_box_shortfall > 0) {
    bool well = total > 2 * v.common_box_bytes;
    t += fmt::format(" Eight cards of 80 GB give {} in total, which is {}short of this estimate ({} {}).", gb(v.common_box_bytes),
                     well ? "well " : "", gb(total), scenario);
  } else if (total > kVerdictCardSizes[1]) {
    t += fmt::format(" Eight cards of 80 GB give {}, which holds the {} estimate with {} to spare.", gb(v.common_box_bytes), gb(total),
                     gb(static_cast<uint64_t>(-v.common_box_shortfall)));
  }
  auto cards_of = [](uint64_t n, const char* size) { return fmt::format("{} card{} of {}", n, n == 1 ? "" : "s", size); };
  if (total <= kVerdictCardSizes[0]) {
    t += fmt::format(" It leaves {} free on a 24 GB card.", gb(kVerdictCardSizes[0] - total));
  } else if (total <= kVerdictCardSizes[1]) {
    t += fmt::format(" It takes {} before sharding overhead, or one 80 GB card with {} to spare.", cards_of(c24.cards, "24 GB"),
                     gb(kVerdictCardSizes[1] - total));
  } else {
    t += fmt::format(" The total takes {} or {} before sharding overhead ({}).", cards_of(c80.cards, "80 GB"), cards_of(c192.cards, "192 GB"),
                     cards_of(c24.cards, "24 GB"));
  }
  if (total > node192) {
    uint64_t nodes = c192.nodes;
    t += fmt::format(" {} nodes of eight 192 GB cards offer {}, which clears it on paper.", nodes == 2 ? std::string("Two") : std::to_string(nodes),
                     gb(nodes * node192));
  }
  if (v.dominant == "weights") {
    if (v.context_share_bp < 500) {
      t += fmt::format(" Context is cheap here: cache and state are {} of the total, so lowering context won't change the plan. "
                       "Real savings have to come from the weights: check which lower-precision checkpoints or builds your engine supports.",
                       format_percent_bp(v.context_share_bp));
    } else {
      t += fmt::format(" The weights are the largest part, but cache and state already take {} of the total {}: context length and concurrency "
                       "are real levers too.", format_percent_bp(v.context_share_bp), scenario);
    }
  } else if (v.dominant == "cache") {
    t += fmt::format(" The cache dominates {} ({} of the total): a shorter context, fewer concurrent sequences or an 8-bit cache "
                     "(--cache-dtype q8_0) save more than a smaller weights tier.", scenario, format_percent_bp(v.context_share_bp));
  } else {
    t += " The recurrent state dominates: it grows with concurrent sequences, so fewer sequences is the lever, not a shorter context.";
  }
  if (e.state_bytes > 0 && v.dominant != "state") {
    t += fmt::format(" The recurrent state is fixed at {} per sequence whatever the context.", format_bytes(e.state_bytes / e.scenario.sequences));
  }
  if (total > kVerdictCardSizes[1]) {
    t += " Check each card's allocation, not only the pool: an aggregate fit can still fail on the busiest shard.";
  }
  v.text = t;
  return v;
}

}  // namespace vc
