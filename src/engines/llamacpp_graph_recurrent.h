#pragma once
// What llama.cpp's recurrent layers add to a graph for the scheduler (engines/ggml_sched_replay.h):
// build_rs over a layer's state cache (llama-graph.cpp, llama.cpp 80fb11ac), and views whose copy
// is not their whole source. Shared by the Mamba-2, Qwen3-Next and Kimi Linear builders.
#include <cstdint>
#include <vector>

#include "engines/llamacpp_graph_builder.h"

namespace vc::llamacpp_graph_detail {

// A view with its own ggml_nbytes (a strided view spans less than its source): what the scheduler
// copies when an op on the other device reads it.
inline int sized_view(GgmlGraph& g, int of, uint64_t bytes) {
  const int v = g.view(of);
  g.tensors[static_cast<size_t>(v)].bytes = bytes;
  return v;
}

// The whole of one of layer `il`'s recurrent caches (r_l or s_l: `values` f32 per sequence, one
// row per sequence slot): what a GET_ROWS or SSM_SCAN reading it copies when it runs elsewhere.
inline int whole_state(Builder& b, size_t il, uint64_t values) {
  return b.g.cache_view(static_cast<int>(il), checked_product({values, b.in_.seqs, kF32}));
}

// The views of s_copy every recurrent layer reads (build_rs_inp_impl: s_copy_main, the ubatch's
// sequences, and s_copy_extra, the slots beyond them); made once, as llama.cpp makes them once, so
// that a device that needs them copies each once. When reserving there are no slots beyond the
// ubatch: s_copy_extra spans 0 bytes, stood for by an empty input (a view here would be copied at
// its source's size).
struct StateCopy {
  int main = -1, extra = -1;
};
inline StateCopy state_copy_views(GgmlGraph& g, int s_copy) {
  StateCopy c;
  c.main = g.view(s_copy);
  c.extra = g.leaf(0);
  return c;
}

// build_rs's states beyond the ubatch's (GET_ROWS by s_copy_extra, zero rows when reserving),
// copied back into the cache.
inline void extra_states(Builder& b, size_t il, uint64_t values, const StateCopy& s_copy) {
  const int extra = b.g.node(0, {whole_state(b, il, values), s_copy.extra});
  b.mark(extra, SchedOp::GetRows);
  into_cache(b, il, {extra});
}

// build_rs with the default gather: SCALE of the zero row (in place, in the cache), GET_ROWS of the
// ubatch's rows out of the whole cache by s_copy_main, then the rows beyond them (s_copy_extra,
// none when reserving) copied back into the cache. Returns the gathered rows [values, seqs].
inline int gathered_state(Builder& b, size_t il, uint64_t values, const StateCopy& s_copy) {
  GgmlGraph& g = b.g;
  into_cache(b, il, {});
  const int rows = g.node(checked_product({values, b.in_.seqs, kF32}), {whole_state(b, il, values), s_copy.main});
  b.mark(rows, SchedOp::GetRows);
  extra_states(b, il, values, s_copy);
  return rows;
}

}  // namespace vc::llamacpp_graph_detail
