#include "engines/torch_caching_allocator.h"

#include <set>

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

}  // namespace

TorchReserved torch_reserved(const std::vector<uint64_t>& request_bytes) {
  TorchReserved r;
  // Free blocks by size; which of two equal blocks best fit takes changes nothing that follows.
  std::multiset<uint64_t> small_free, large_free;
  for (uint64_t orig : request_bytes) {
    if (orig == 0) continue;  // an empty tensor takes no block
    r.requested = checked_add(r.requested, orig);
    const uint64_t size = round_size(orig);
    const bool small = size <= kSmallSize;
    std::multiset<uint64_t>& pool = small ? small_free : large_free;
    uint64_t block = 0;
    if (auto it = pool.lower_bound(size); it != pool.end()) {
      block = *it;
      pool.erase(it);
    } else {
      block = allocation_size(size);
      r.reserved = checked_add(r.reserved, block);
      ++r.segments;
    }
    const uint64_t rest = block - size;
    const bool split = small ? rest >= kMinBlockSize : rest > kSmallSize;
    if (split) pool.insert(rest);
    r.allocated = checked_add(r.allocated, split ? size : block);
  }
  return r;
}

}  // namespace vc
