#pragma once
// A replay of ggml-alloc's graph allocator (ggml/src/ggml-alloc.c, llama.cpp 80fb11ac): the
// order in which a compute graph's intermediate tensors are placed in one buffer and freed, and
// the buffer size that packing ends at. Our own code, written from the algorithm:
// - leafs are placed first (graph inputs: token ids, positions, masks), then each node in graph
//   order, after its parents;
// - a node whose op may run in place (ggml_op_can_inplace) takes over its first parent that is
//   owned by the allocator, has that node as its only consumer and no views, and has the same
//   layout; otherwise it gets the best-fitting free block other than the last one (the smallest
//   that fits, the later one on ties), else the end of the buffer;
// - a tensor is freed when its last consumer has run and no view of it is alive; a view frees
//   its source when it is the last thing holding it; graph outputs are never freed;
// - freed blocks merge with free neighbours; every size is padded to the buffer's alignment.
// Weights and caches live in other buffers: a graph here holds only what the compute buffer
// holds (a consumer of a weight simply lists no parent for it).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vc {

// What ggml_backend_sched needs to know of an op to place it (engines/ggml_sched_replay.h).
enum class SchedOp {
  Other,
  GetRows,    // ggml-cuda's offload_op never takes it (batch size 0)
  Rope,       // placed by its neighbours, not by its frequency-factor weight
  FlashAttn,  // likewise (the sinks weight)
  MulMat,     // offload batch: ne[1]
  MulMatId,   // offload batch: ne[2]
  CacheView,  // a view of a layer's KV cache (in the cache's buffer): a source, never placed here
};

struct GgmlGraph {
  struct Tensor {
    uint64_t bytes = 0;         // ggml_nbytes (views: 0)
    int view_of = -1;           // a view: the tensor whose memory it looks into (own tensors only)
    bool elsewhere = false;     // written into another buffer (a cache): never placed here
    bool leaf = false;          // a graph input, placed before the nodes
    bool output = false;        // never freed (the logits, the final norm)
    bool inplace = false;       // its op may overwrite a parent (ggml_op_can_inplace)
    std::vector<int> parents;   // compute-buffer parents, in src order
    std::vector<bool> same_layout;  // per parent: same type, shape and strides as this tensor
    int buffer = 0;             // the gallocr buffer it is placed in (a scheduler's backend; 0 alone)
    // For the scheduler (graphs with `scheduled` set): the op, the weights it reads (indexes into
    // Model::tensors, in source order), the layer whose cache it views or writes, and the rows
    // ggml-cuda's offload_op weighs it by.
    SchedOp op = SchedOp::Other;
    std::vector<int> weights;
    int cache_layer = -1;
    uint64_t rows = 0;
    bool gpu_unsupported = false;  // ggml-cuda's supports_op says no (a flash-attention head width)
    // Its allocation where the GPU runs it, when ggml-cuda's buffer type asks for more than
    // ggml_nbytes (get_alloc_size: flash attention's F16 copies of a quantized K and V); 0: bytes.
    uint64_t gpu_bytes = 0;
  };
  std::vector<Tensor> tensors;  // leafs and nodes, nodes in execution order
  bool scheduled = false;       // every node carries what ggml_sched_replay reads

  int leaf(uint64_t bytes);
  // An op writing a new tensor of `bytes`; `inplace_parent`: the parent with this tensor's layout
  // when the op can run in place (-1: none), which must also be listed in `parents`.
  int node(uint64_t bytes, std::vector<int> parents, int inplace_parent = -1);
  int view(int of);  // reshape, permute, view, transpose: no memory of its own
  // An op that writes into another buffer (a copy or row-set into a cache): it only consumes.
  int write_out(std::vector<int> parents);
  // A view of layer `layer`'s cache of `bytes` (K or V rows an attention op reads).
  int cache_view(int layer, uint64_t bytes);
  void mark_output(int t) { tensors[static_cast<size_t>(t)].output = true; }
};

// The compute buffer ggml-alloc reserves for `graph`: the highest end of any placement.
uint64_t ggml_alloc_peak(const GgmlGraph& graph, uint64_t alignment);
// The same with one buffer per Tensor::buffer id (ggml_gallocr_new_n: one dynamic allocator per
// buffer type); `alignments[i]` is buffer i's. An in-place op takes its parent's place and buffer.
std::vector<uint64_t> ggml_alloc_peaks(const GgmlGraph& graph, const std::vector<uint64_t>& alignments);

}  // namespace vc
