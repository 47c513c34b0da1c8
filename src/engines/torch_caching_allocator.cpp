#include "engines/torch_caching_allocator.h"

#include <set>
#include <tuple>

#include "core/checked.h"

namespace vc {
namespace {

// c10/cuda/CUDACachingAllocator.cpp
constexpr uint64_t kMinBlockSize = 512;             // all sizes are rounded to at least 512 bytes
constexpr uint64_t kSmallSize = 1048576;            // largest "small" allocation is 1 MiB
constexpr uint64_t kSmallBuffer = 2097152;          // "small" allocations are packed in 2 MiB blocks
constexpr uint64_t kLargeBuffer = 20971520;         // "large" allocations may be packed in 20 MiB blocks
constexpr uint64_t kMinLargeAlloc = 10485760;       // allocations between 1 and 10 MiB may use kLargeBuffer
constexpr uint64_t kRoundLarge = 2097152;           // round up large allocations to 2 MiB

uint64_t round_size(uint64_t size) { return size < kMinBlockSize ? kMinBlockSize : checked_mul(ceil_div(size, kMinBlockSize), kMinBlockSize); }

uint64_t allocation_size(uint64_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return checked_mul(ceil_div(size, kRoundLarge), kRoundLarge);
}

constexpr size_t kNone = static_cast<size_t>(-1);

struct Block {
  size_t segment = 0;
  uint64_t offset = 0, size = 0;
  bool allocated = false;
  size_t prev = kNone, next = kNone;  // neighbours in the segment
  uint64_t requested = 0;             // the request's bytes while allocated
};

struct Segment {
  uint64_t size = 0;
  bool small = false;
};

class Replay {
 public:
  size_t malloc(uint64_t orig) {
    const uint64_t size = round_size(orig);
    const bool small = size <= kSmallSize;
    auto& pool = small ? small_free_ : large_free_;
    size_t b = kNone;
    if (auto it = pool.lower_bound({size, 0, 0, 0}); it != pool.end()) {
      b = std::get<3>(*it);
      pool.erase(it);
    } else {
      segments_.push_back({allocation_size(size), small});
      blocks_.push_back({segments_.size() - 1, 0, segments_.back().size, false, kNone, kNone, 0});
      b = blocks_.size() - 1;
    }
    const uint64_t rest = blocks_[b].size - size;
    if (small ? rest >= kMinBlockSize : rest > kSmallSize) {
      Block r{blocks_[b].segment, blocks_[b].offset + size, rest, false, b, blocks_[b].next, 0};
      blocks_.push_back(r);
      const size_t ri = blocks_.size() - 1;
      if (r.next != kNone) blocks_[r.next].prev = ri;
      blocks_[b].next = ri;
      blocks_[b].size = size;
      insert_free(ri);
    }
    blocks_[b].allocated = true;
    blocks_[b].requested = orig;
    return b;
  }

  void free(size_t b) {
    if (b == kNone || !blocks_[b].allocated) return;
    blocks_[b].allocated = false;
    blocks_[b].requested = 0;
    // try_merge_blocks: a free neighbour of the same segment joins the freed block.
    for (size_t n : {blocks_[b].prev, blocks_[b].next}) {
      if (n == kNone || blocks_[n].allocated) continue;
      erase_free(n);
      Block& x = blocks_[b];
      const Block& y = blocks_[n];
      if (y.offset < x.offset) {
        x.offset = y.offset;
        x.prev = y.prev;
        if (x.prev != kNone) blocks_[x.prev].next = b;
      } else {
        x.next = y.next;
        if (x.next != kNone) blocks_[x.next].prev = b;
      }
      x.size += y.size;
      blocks_[n].size = 0;  // absorbed
    }
    insert_free(b);
  }

  // empty_cache, then the allocator's totals.
  TorchReserved state() const {
    TorchReserved r;
    std::vector<bool> live(segments_.size(), false);
    for (const Block& x : blocks_) {
      if (!x.allocated) continue;
      live[x.segment] = true;
      r.requested = checked_add(r.requested, x.requested);
      r.allocated = checked_add(r.allocated, x.size);
    }
    for (size_t i = 0; i < segments_.size(); ++i) {
      if (!live[i]) continue;
      r.reserved = checked_add(r.reserved, segments_[i].size);
      ++r.segments;
    }
    return r;
  }

 private:
  using Key = std::tuple<uint64_t, size_t, uint64_t, size_t>;  // size, segment, offset (the address), block
  Key key(size_t b) const { return {blocks_[b].size, blocks_[b].segment, blocks_[b].offset, b}; }
  void insert_free(size_t b) { (segments_[blocks_[b].segment].small ? small_free_ : large_free_).insert(key(b)); }
  void erase_free(size_t b) { (segments_[blocks_[b].segment].small ? small_free_ : large_free_).erase(key(b)); }

  std::vector<Segment> segments_;
  std::vector<Block> blocks_;
  std::set<Key> small_free_, large_free_;
};

}  // namespace

TorchReserved torch_reserved_steps(const std::vector<TorchStep>& steps) {
  Replay a;
  std::vector<size_t> block_of(steps.size(), kNone);
  for (size_t i = 0; i < steps.size(); ++i) {
    const TorchStep& s = steps[i];
    if (s.free) {
      if (s.allocation < i) a.free(block_of[s.allocation]);
    } else if (s.bytes) {  // an empty tensor takes no block
      block_of[i] = a.malloc(s.bytes);
    }
  }
  return a.state();
}

TorchReserved torch_reserved(const std::vector<uint64_t>& request_bytes) {
  std::vector<TorchStep> steps;
  steps.reserve(request_bytes.size());
  for (uint64_t b : request_bytes) steps.push_back(TorchStep::alloc(b));
  return torch_reserved_steps(steps);
}

}  // namespace vc
