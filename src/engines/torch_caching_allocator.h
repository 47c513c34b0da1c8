#pragma once
// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator::malloc;
// ROCm builds hipify the same file) replayed for a sequence of allocations none of which is freed,
// as when a model's weight tensors are created one after another. What a process holds on the GPU
// is the allocator's *reserved* bytes (its cudaMalloc'd segments), not the tensors' bytes: an
// engine that measures its weights as the fall in free device memory (torch.cuda.mem_get_info, as
// SGLang does) sees the segments. Rules, with the allocator's defaults (no PYTORCH_CUDA_ALLOC_CONF:
// no expandable segments, max_split_size unlimited, no power-of-two rounding):
//   round_size: a request is rounded up to a multiple of 512 B (at least 512 B).
//   get_pool: 1 MiB (kSmallSize) and less go to the small pool, larger ones to the large pool.
//   get_free_block: best fit, the smallest free block of the pool at least that size.
//   get_allocation_size: with none, a new segment of 2 MiB (kSmallBuffer) for a small request,
//     20 MiB (kLargeBuffer) for one under 10 MiB (kMinLargeAlloc), else the request rounded up to
//     2 MiB (kRoundLarge).
//   should_split: the rest of the block becomes a free block when it is at least 512 B (small
//     pool) or more than 1 MiB (large pool); a large block's rest of 1 MiB or less stays with the
//     tensor (allocated, unusable).
// Without frees no blocks merge, and empty_cache (which returns only whole free segments) gives
// back nothing a live tensor holds. vLLM's "Model loading took" is torch's allocated bytes
// (DeviceMemoryProfiler: platforms/cuda.py get_current_memory_usage, max_memory_allocated after a
// reset), SGLang's "mem usage" the fall in free memory, so the reserved bytes.
#include <cstdint>
#include <vector>

namespace vc {

struct TorchReserved {
  uint64_t requested = 0;  // the requests' bytes as asked
  uint64_t allocated = 0;  // the blocks handed out (torch.cuda.memory_allocated): each request rounded
                           // to 512 B, plus a block's rest where it was not split off
  uint64_t reserved = 0;   // the segments cudaMalloc'd for them (torch.cuda.memory_reserved)
  uint64_t segments = 0;
};

// The allocator's state after these requests, in order, on one device and stream, none freed.
TorchReserved torch_reserved(const std::vector<uint64_t>& request_bytes);

}  // namespace vc
