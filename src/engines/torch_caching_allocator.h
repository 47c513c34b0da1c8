#pragma once
// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator::malloc
// and free; ROCm builds hipify the same file) replayed for a sequence of allocations and frees on
// one device and stream, as when a model's weight tensors are created one after another (with the
// temporaries some modules compute on the way, such as a RoPE cos/sin cache). What a process holds
// on the GPU is the allocator's *reserved* bytes (its cudaMalloc'd segments), not the tensors' bytes:
// an engine that measures its weights as the fall in free device memory after empty_cache
// (torch.cuda.mem_get_info, as SGLang does) sees the segments that still hold a live tensor. Rules,
// with the allocator's defaults (no PYTORCH_CUDA_ALLOC_CONF: no expandable segments, max_split_size
// unlimited, no power-of-two rounding):
//   round_size: a request is rounded up to a multiple of 512 B (at least 512 B).
//   get_pool: 1 MiB (kSmallSize) and less go to the small pool, larger ones to the large pool.
//   get_free_block: best fit, the smallest free block of the pool at least that size (ties: the
//     lower address; here the earlier segment, then the lower offset).
//   get_allocation_size: with none, a new segment of 2 MiB (kSmallBuffer) for a small request,
//     20 MiB (kLargeBuffer) for one under 10 MiB (kMinLargeAlloc), else the request rounded up to
//     2 MiB (kRoundLarge).
//   should_split: the rest of the block becomes a free block when it is at least 512 B (small
//     pool) or more than 1 MiB (large pool); a large block's rest of 1 MiB or less stays with the
//     tensor (allocated, unusable).
//   free_block: a freed block merges with a free neighbour of its segment (try_merge_blocks).
//   empty_cache (release_cached_blocks): every segment that is one whole free block goes back to
//     the device; a segment that holds a live block stays, its free rests included.
// vLLM's "Model loading took" is torch's allocated bytes (DeviceMemoryProfiler: platforms/cuda.py
// get_current_memory_usage, max_memory_allocated after a reset), SGLang's "mem usage" the fall in
// free memory, so the reserved bytes after empty_cache.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vc {

struct TorchReserved {
  uint64_t requested = 0;  // the live requests' bytes as asked
  uint64_t allocated = 0;  // the live blocks (torch.cuda.memory_allocated): each request rounded
                           // to 512 B, plus a block's rest where it was not split off
  uint64_t reserved = 0;   // the segments that hold a live block (torch.cuda.memory_reserved after empty_cache)
  uint64_t segments = 0;
};

// One step of a replay: an allocation of `bytes`, or (free) the release of the allocation made at
// step `allocation` (an index into the same sequence).
struct TorchStep {
  uint64_t bytes = 0;
  bool free = false;
  size_t allocation = 0;
  static TorchStep alloc(uint64_t b) { return {b, false, 0}; }
  static TorchStep release(size_t step) { return {0, true, step}; }
};

// The allocator's state after these steps, in order, then empty_cache.
TorchReserved torch_reserved_steps(const std::vector<TorchStep>& steps);
// The same for requests none of which is freed.
TorchReserved torch_reserved(const std::vector<uint64_t>& request_bytes);

}  // namespace vc
