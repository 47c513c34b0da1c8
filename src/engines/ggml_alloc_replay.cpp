#include "engines/ggml_alloc_replay.h"

#include <algorithm>
#include <limits>

#include "core/checked.h"

namespace vc {

int GgmlGraph::leaf(uint64_t bytes) {
  Tensor t;
  t.bytes = bytes;
  t.leaf = true;
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int GgmlGraph::node(uint64_t bytes, std::vector<int> parents, int inplace_parent) {
  Tensor t;
  t.bytes = bytes;
  t.inplace = inplace_parent >= 0;
  for (int p : parents) t.same_layout.push_back(p == inplace_parent);
  t.parents = std::move(parents);
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int GgmlGraph::view(int of) {
  Tensor t;
  const Tensor& src = tensors[static_cast<size_t>(of)];
  t.view_of = src.view_of >= 0 ? src.view_of : of;  // ggml keeps the root as view_src
  t.parents = {of};
  t.same_layout = {false};
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int GgmlGraph::write_out(std::vector<int> parents) {
  Tensor t;
  t.elsewhere = true;
  t.same_layout.assign(parents.size(), false);
  t.parents = std::move(parents);
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int GgmlGraph::cache_view(int layer, uint64_t bytes) {
  Tensor t;
  t.elsewhere = true;
  t.op = SchedOp::CacheView;
  t.cache_layer = layer;
  t.bytes = bytes;
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

namespace {

// ggml_dyn_tallocr with one chunk: free blocks sorted by offset, the last one open-ended.
class DynAllocator {
 public:
  explicit DynAllocator(uint64_t alignment) : alignment_(alignment) { blocks_.push_back({0, kOpenEnd}); }

  uint64_t alloc(uint64_t size) {
    size = pad(size);
    // Best fit among all blocks but the last (the smallest that fits; the later one on ties).
    int best = -1;
    uint64_t best_size = std::numeric_limits<uint64_t>::max();
    for (size_t i = 0; i + 1 < blocks_.size(); ++i) {
      if (blocks_[i].size >= size && blocks_[i].size <= best_size) {
        best = static_cast<int>(i);
        best_size = blocks_[i].size;
      }
    }
    if (best < 0) best = static_cast<int>(blocks_.size()) - 1;  // the open end always fits
    Block& b = blocks_[static_cast<size_t>(best)];
    const uint64_t offset = b.offset;
    b.offset += size;
    b.size -= size;
    if (b.size == 0) blocks_.erase(blocks_.begin() + best);
    max_size_ = std::max(max_size_, checked_add(offset, size));
    return offset;
  }

  void free(uint64_t offset, uint64_t size) {
    size = pad(size);
    for (size_t i = 0; i < blocks_.size(); ++i) {
      Block& b = blocks_[i];
      if (b.offset + b.size == offset) {  // ends where the freed bytes start
        b.size += size;
        if (i + 1 < blocks_.size() && b.offset + b.size == blocks_[i + 1].offset) {
          b.size += blocks_[i + 1].size;
          blocks_.erase(blocks_.begin() + static_cast<long>(i) + 1);
        }
        return;
      }
      if (offset + size == b.offset) {  // starts where the freed bytes end
        b.offset = offset;
        b.size += size;
        if (i > 0 && blocks_[i - 1].offset + blocks_[i - 1].size == b.offset) {
          blocks_[i - 1].size += b.size;
          blocks_.erase(blocks_.begin() + static_cast<long>(i));
        }
        return;
      }
    }
    auto at = std::find_if(blocks_.begin(), blocks_.end(), [&](const Block& b) { return b.offset >= offset; });
    blocks_.insert(at, Block{offset, size});
  }

  uint64_t max_size() const { return max_size_; }

 private:
  struct Block {
    uint64_t offset, size;
  };
  static constexpr uint64_t kOpenEnd = std::numeric_limits<uint64_t>::max() / 2;
  uint64_t pad(uint64_t size) const { return ceil_div(size, alignment_) * alignment_; }
  uint64_t alignment_;
  uint64_t max_size_ = 0;
  std::vector<Block> blocks_;
};

struct State {
  int children = 0, views = 0;
  bool allocated = false;  // owned by the allocator (not handed to an in-place consumer)
  uint64_t offset = 0;
  int buffer = 0;
};

}  // namespace

uint64_t ggml_alloc_peak(const GgmlGraph& graph, uint64_t alignment) {
  for (const auto& t : graph.tensors)
    if (t.buffer != 0) return ggml_alloc_peaks(graph, {alignment, alignment})[0];
  return ggml_alloc_peaks(graph, {alignment})[0];
}

std::vector<uint64_t> ggml_alloc_peaks(const GgmlGraph& graph, const std::vector<uint64_t>& alignments) {
  const auto& ts = graph.tensors;
  std::vector<State> st(ts.size());
  std::vector<DynAllocator> allocs;
  for (uint64_t a : alignments) allocs.emplace_back(a);
  auto is_view = [&](size_t i) { return ts[i].view_of >= 0 || ts[i].elsewhere; };

  auto place = [&](size_t i) {
    const GgmlGraph::Tensor& t = ts[i];
    if (st[i].allocated || is_view(i)) return;
    if (t.inplace) {
      for (size_t j = 0; j < t.parents.size(); ++j) {
        const auto p = static_cast<size_t>(t.parents[j]);
        if (!st[p].allocated || ts[p].output || !t.same_layout[j]) continue;
        if (st[p].children == 1 && st[p].views == 0) {
          st[i].allocated = true;
          st[i].offset = st[p].offset;
          st[i].buffer = st[p].buffer;
          st[p].allocated = false;
          return;
        }
      }
    }
    st[i].allocated = true;
    st[i].buffer = t.buffer;
    st[i].offset = allocs.at(static_cast<size_t>(t.buffer)).alloc(t.bytes);
  };
  auto release = [&](size_t i) {
    if (ts[i].output) return;
    allocs[static_cast<size_t>(st[i].buffer)].free(st[i].offset, ts[i].bytes);
    st[i].allocated = false;
  };

  for (size_t i = 0; i < ts.size(); ++i)
    if (ts[i].leaf) place(i);
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].view_of >= 0) st[static_cast<size_t>(ts[i].view_of)].views += 1;
    for (int p : ts[i].parents) st[static_cast<size_t>(p)].children += 1;
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].leaf) continue;
    place(i);
    for (int pi : ts[i].parents) {
      const auto p = static_cast<size_t>(pi);
      State& ps = st[p];
      ps.children -= 1;
      if (ps.children != 0 || ps.views != 0) continue;
      if (ts[p].view_of >= 0) {
        const auto root = static_cast<size_t>(ts[p].view_of);
        st[root].views -= 1;
        if (st[root].views == 0 && st[root].children == 0 && st[root].allocated) release(root);
      } else if (ps.allocated && !ts[p].elsewhere) {
        release(p);
      }
    }
  }
  std::vector<uint64_t> peaks;
  for (const auto& a : allocs) peaks.push_back(a.max_size());
  return peaks;
}

}  // namespace vc
