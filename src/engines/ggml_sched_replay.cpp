#include "engines/ggml_sched_replay.h"

#include <map>
#include <utility>
#include <vector>

namespace vc {
namespace {

// ggml-cuda.cu ggml_backend_cuda_device_offload_op: get_op_batch_size(op) >= 32
// (GGML_OP_OFFLOAD_MIN_BATCH's default), where GET_ROWS counts 0 rows.
constexpr uint64_t kOffloadMinBatch = 32;

// A source of an op: a tensor of the graph, or a weight (Model::tensors index).
struct Source {
  bool weight = false;
  int id = -1;
  bool operator<(const Source& o) const { return std::pair(weight, id) < std::pair(o.weight, o.id); }
};

class Scheduler {
 public:
  Scheduler(const GgmlGraph& g, const SchedDevices& d) : g_(g), d_(d), backend_(g.tensors.size(), -1) {}

  SchedPeaks run(uint64_t gpu_alignment, uint64_t cpu_alignment) {
    assign();
    split();
    const GgmlGraph copy = copy_graph();
    const auto peaks = ggml_alloc_peaks(copy, {gpu_alignment, cpu_alignment});
    return {peaks[kSchedGpu], peaks[kSchedCpu], splits_.size()};
  }

 private:
  const GgmlGraph::Tensor& t(size_t i) const { return g_.tensors[i]; }
  bool is_view_op(size_t i) const { return t(i).view_of >= 0 || t(i).op == SchedOp::CacheView; }
  bool is_node(size_t i) const { return !t(i).leaf && !is_view_op(i); }
  bool supports(int b, size_t i) const { return b == kSchedCpu || !t(i).gpu_unsupported; }
  bool offload(size_t i) const { return t(i).op != SchedOp::GetRows && t(i).rows >= kOffloadMinBatch; }

  // The sources of op i in ggml's src order: a matrix product reads its weight first.
  std::vector<Source> sources(size_t i) const {
    std::vector<Source> s;
    const bool weight_first = t(i).op == SchedOp::MulMat || t(i).op == SchedOp::MulMatId;
    auto weights = [&] {
      for (int w : t(i).weights) s.push_back({true, w});
    };
    if (weight_first) weights();
    for (int p : t(i).parents) s.push_back({false, p});
    if (!weight_first) weights();
    return s;
  }
  int source_backend(const Source& s) const {
    if (s.weight) return d_.weight_backend(s.id);
    const auto& tp = t(static_cast<size_t>(s.id));
    const int own = backend_[static_cast<size_t>(s.id)];
    return own != -1 || tp.view_of < 0 ? own : backend_[static_cast<size_t>(tp.view_of)];
  }

  // ggml_backend_sched_backend_id_from_cur for an op that is not yet placed.
  int from_current(size_t i) const {
    const auto& n = t(i);
    if (n.leaf) return kSchedCpu;  // graph input
    if (n.op == SchedOp::CacheView || (n.elsewhere && n.cache_layer >= 0)) return d_.cache_backend(n.cache_layer);
    if (n.op == SchedOp::Rope || n.op == SchedOp::FlashAttn) return -1;
    for (const Source& s : sources(i)) {
      if (!s.weight) continue;
      const int wb = d_.weight_backend(s.id);
      if (!supports(wb, i)) continue;
      if (wb == kSchedCpu && d_.op_offload && supports(kSchedGpu, i) && offload(i)) return kSchedGpu;
      return wb;
    }
    return -1;
  }

  void expand(bool down, bool gpu_only) {
    int cur = -1;
    const size_t n = g_.tensors.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = down ? k : n - 1 - k;
      if (!is_node(i)) continue;
      int& b = backend_[i];
      if (b != -1) {
        cur = gpu_only && b == kSchedCpu ? -1 : b;
      } else if (cur != -1 && supports(cur, i)) {
        b = cur;
      }
    }
  }

  void assign() {
    for (size_t i = 0; i < g_.tensors.size(); ++i) backend_[i] = from_current(i);
    expand(true, true);
    expand(false, true);
    expand(true, false);
    expand(false, false);
    // pass 3: an op no expansion reached goes to the backend that holds most of its sources
    // (buffer types differ between the GPU and the host, so a source counts for its own backend).
    for (size_t i = 0; i < g_.tensors.size(); ++i) {
      if (!is_node(i) || backend_[i] != -1) continue;
      int best = -1;
      for (int b : {kSchedGpu, kSchedCpu}) {
        if (!supports(b, i)) continue;
        int count = 0;
        for (const Source& s : sources(i)) count += source_backend(s) == b;
        if (count > best) {
          best = count;
          backend_[i] = b;
        }
      }
    }
    // pass 4: views on what they view; whatever is left on the first backend that runs it.
    for (size_t i = 0; i < g_.tensors.size(); ++i) {
      if (t(i).leaf) continue;
      int& b = backend_[i];
      if (t(i).view_of >= 0 && b == -1) b = backend_[static_cast<size_t>(t(i).view_of)];
      if (b == -1) b = supports(kSchedGpu, i) ? kSchedGpu : kSchedCpu;
    }
  }

  struct Split {
    int backend = -1;
    std::vector<Source> inputs;
  };

  void split() {
    split_of_.assign(g_.tensors.size(), 0);
    int cur = -1;
    for (size_t i = 0; i < g_.tensors.size(); ++i) {
      if (t(i).leaf) continue;
      if (!is_node(i)) {
        split_of_[i] = splits_.empty() ? 0 : static_cast<int>(splits_.size()) - 1;
        continue;
      }
      const int b = backend_[i];
      const std::vector<Source> srcs = sources(i);
      bool fresh = splits_.empty() || b != cur;
      if (!fresh && !splits_.back().inputs.empty()) {
        // a weight on the other device starts a new split, so that earlier copies can be freed
        for (const Source& s : srcs) fresh |= s.weight && d_.weight_backend(s.id) != cur;
      }
      if (fresh) {
        if (splits_.empty()) {
          // views before the first op belong to the first split
          for (size_t j = 0; j < i; ++j) split_of_[j] = 0;
        }
        splits_.push_back({b, {}});
        cur = b;
      }
      split_of_[i] = static_cast<int>(splits_.size()) - 1;
      for (const Source& s : srcs) {
        if (source_backend(s) == cur) continue;
        const auto key = std::pair(s, cur);
        if (!copies_.count(key)) {
          copies_[key] = -1;  // its index in the copy graph, set there
          splits_.back().inputs.push_back(s);
        }
      }
    }
  }

  uint64_t copy_bytes(const Source& s, int backend) const {
    if (s.weight) return backend == kSchedGpu ? d_.weight_gpu_bytes(s.id) : d_.weight_cpu_bytes(s.id);
    const auto& src = t(static_cast<size_t>(s.id));
    // a view's copy has the view's own ggml_nbytes where the graph gives it, else its source's
    if (src.view_of >= 0 && src.bytes == 0) return t(static_cast<size_t>(src.view_of)).bytes;
    return src.bytes;
  }

  GgmlGraph copy_graph() {
    GgmlGraph c;
    std::vector<int> map(g_.tensors.size(), -1);
    for (size_t i = 0; i < g_.tensors.size(); ++i) {
      if (!t(i).leaf) continue;
      map[i] = static_cast<int>(c.tensors.size());
      c.tensors.push_back(t(i));
      c.tensors.back().buffer = kSchedCpu;
    }
    size_t next = 0;
    std::vector<int> deps;  // their parent is still the source's index in g_
    for (size_t k = 0; k < splits_.size(); ++k) {
      const int sb = splits_[k].backend;
      for (const Source& s : splits_[k].inputs) {
        if (!s.weight) {  // keeps the source alive until it is copied (a view of this split: mapped below)
          const int dep = c.write_out({s.id});
          c.tensors[static_cast<size_t>(dep)].buffer = source_backend(s);
          deps.push_back(dep);
        }
        const int cpy = c.node(copy_bytes(s, sb), {});
        c.tensors[static_cast<size_t>(cpy)].buffer = sb;
        copies_[{s, sb}] = cpy;
      }
      for (; next < g_.tensors.size() && (t(next).leaf || split_of_[next] <= static_cast<int>(k)); ++next) {
        if (t(next).leaf) continue;
        GgmlGraph::Tensor n = t(next);
        n.buffer = backend_[next];
        if (n.buffer == kSchedGpu && n.gpu_bytes) n.bytes = n.gpu_bytes;
        if (n.view_of >= 0) n.view_of = map[static_cast<size_t>(n.view_of)];
        const bool reads = is_node(next);
        for (size_t j = 0; j < n.parents.size(); ++j) {
          const int p = n.parents[j];
          const Source s{false, p};
          if (reads && source_backend(s) != n.buffer) {
            n.parents[j] = copies_.at({s, n.buffer});
          } else {
            n.parents[j] = map[static_cast<size_t>(p)];
          }
        }
        if (reads) {
          for (int w : t(next).weights) {
            if (d_.weight_backend(w) == n.buffer) continue;
            n.parents.push_back(copies_.at({Source{true, w}, n.buffer}));
            n.same_layout.push_back(false);
          }
        }
        map[next] = static_cast<int>(c.tensors.size());
        c.tensors.push_back(std::move(n));
      }
    }
    for (int dep : deps) {
      int& parent = c.tensors[static_cast<size_t>(dep)].parents[0];
      parent = map[static_cast<size_t>(parent)];
    }
    return c;
  }

  const GgmlGraph& g_;
  const SchedDevices& d_;
  std::vector<int> backend_;
  std::vector<int> split_of_;
  std::vector<Split> splits_;
  std::map<std::pair<Source, int>, int> copies_;
};

}  // namespace

SchedPeaks ggml_sched_peaks(const GgmlGraph& graph, const SchedDevices& devices, uint64_t gpu_alignment, uint64_t cpu_alignment) {
  return Scheduler(graph, devices).run(gpu_alignment, cpu_alignment);
}

}  // namespace vc
