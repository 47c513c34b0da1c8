#include "engines/llamacpp_profile.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "model/layer_memory.h"
#include "model/quant.h"

namespace vc {
namespace {

uint64_t pad_to(uint64_t n, uint64_t multiple) { return ceil_div(n, multiple) * multiple; }

// llama.cpp refuses a cache type whose block does not divide the head width ("K cache type q8_0
// with block size 32 does not divide n_embd_head_k"); the bytes themselves are layer_memory.h's.
void require_block_divides(const QuantFormat& f, uint64_t head_width, const char* which) {
  if (head_width % f.block_elems != 0) {
    throw InputError(std::string(which) == "K" ? "-ctk" : "-ctv",
                     fmt::format("llama.cpp refuses it: {} cache type {} with block size {} does not divide the head width {}", which, f.name,
                                 f.block_elems, head_width));
  }
}

}  // namespace

LlamaCppMemory llamacpp_memory(const Model& model, const LlamaCppSettings& s) {
  if (s.n_seq == 0 || s.n_seq > 256) throw InputError("-np", "must be from 1 to 256");
  if (s.n_ctx == 0 || s.n_ctx > kMaxContextTokens) throw InputError("-c", "must be from 1 to " + format_tokens(kMaxContextTokens));
  if (s.n_ubatch == 0 || s.n_ubatch > (1u << 20)) throw InputError("-ub", "must be from 1 to 1,048,576");
  if (s.n_batch == 0 || s.n_batch > (1u << 20)) throw InputError("-b", "must be from 1 to 1,048,576");
  const QuantFormat& tk = cache_type(s.type_k, "-ctk");
  const QuantFormat& tv = cache_type(s.type_v, "-ctv");

  // llama_init_from_model refuses a quantized V cache without flash attention ("quantized V cache
  // requires flash_attn to be enabled"); -fa auto turns it on instead.
  if (tv.block_elems > 1 && !s.flash_attn) {  // ggml_is_quantized: a block type
    throw InputError("-ctv", fmt::format("llama.cpp refuses a quantized V cache ({}) without flash attention; use -fa on or an f16/bf16/f32 V cache", tv.name));
  }

  LlamaCppMemory m;
  // llama_context: n_ctx is padded to 256 cells; each sequence gets n_ctx / n_seq cells, padded
  // to 256 again, unless the cache is unified (one stream of n_ctx cells).
  m.n_ctx = pad_to(s.n_ctx, kLlamaCppCellPad);
  m.n_ctx_seq = s.kv_unified ? m.n_ctx : pad_to(m.n_ctx / s.n_seq, kLlamaCppCellPad);
  if (!s.kv_unified) m.n_ctx = m.n_ctx_seq * s.n_seq;
  const uint64_t streams = s.kv_unified ? 1 : s.n_seq;
  m.kv_cells = m.n_ctx_seq;
  m.rs_cells = std::max<uint64_t>(1, s.n_seq);

  const CacheLayout layout{&tk, &tv, std::nullopt, 1};
  uint64_t full_layers = 0, swa_layers = 0, rs_layers = 0;
  m.layer_kv_bytes.assign(model.layers.size(), 0);
  m.layer_state_bytes.assign(model.layers.size(), 0);
  for (std::size_t il = 0; il < model.layers.size(); ++il) {
    for (const AttentionSpec* a : mixers(model.layers[il])) {
      if (!a) continue;
      const TokenCacheBytes t = token_cache_bytes(*a, layout);
      uint64_t k = 0, v = 0;
      switch (a->kind) {
        case AttentionKind::Full:
          require_block_divides(tk, a->head_dim_k, "K");
          require_block_divides(tv, a->head_dim_v, "V");
          k = checked_product({t.k, m.kv_cells, streams});
          v = checked_product({t.v, m.kv_cells, streams});
          m.kv_k_bytes = checked_add(m.kv_k_bytes, k);
          m.kv_v_bytes = checked_add(m.kv_v_bytes, v);
          ++full_layers;
          break;
        case AttentionKind::Latent:
          // MLA is one K-only head of kv_lora + rope values (V is a view of K); the DSA indexer
          // keys are a second K-only cache of the same type.
          if (tk.name != tv.name) throw InputError("-ctv", "llama.cpp refuses different K and V cache types for latent attention: V is a view of K");
          require_block_divides(tk, uint64_t{a->latent_rank} + a->rope_dim, "K");
          require_block_divides(tv, a->latent_rank, "V");  // the V view is the latent part: its block must divide kv_lora
          if (a->index_key_dim) require_block_divides(tk, a->index_key_dim, "K");
          k = checked_product({checked_add(t.latent, t.index), m.kv_cells, streams});
          m.kv_k_bytes = checked_add(m.kv_k_bytes, k);
          ++full_layers;
          break;
        case AttentionKind::SlidingWindow: {
          // llama_kv_cache_iswa: pad256(min(n_ctx_seq, window x (unified ? n_seq : 1) + n_ubatch)),
          // with llama_context's n_ubatch = min(-ub, min(-c, -b)).
          const uint64_t ubatch = std::min({s.n_ubatch, s.n_batch, s.n_ctx});
          const uint64_t cells = s.swa_full ? m.n_ctx_seq
                                            : std::min(m.n_ctx_seq, pad_to(checked_add(checked_mul(a->window, s.kv_unified ? s.n_seq : 1), ubatch), 256));
          m.swa_cells = cells;
          require_block_divides(tk, a->head_dim_k, "K");
          require_block_divides(tv, a->head_dim_v, "V");
          k = checked_product({t.k, cells, streams});
          v = checked_product({t.v, cells, streams});
          m.swa_k_bytes = checked_add(m.swa_k_bytes, k);
          m.swa_v_bytes = checked_add(m.swa_v_bytes, v);
          ++swa_layers;
          break;
        }
        case AttentionKind::LinearState: {
          // llama_memory_recurrent: R (conv) and S (state) rows in f32, one per sequence.
          const StateBytes st = state_bytes(*a, StateLayout::F32);
          k = checked_mul(st.conv, m.rs_cells);
          v = checked_mul(st.matrix, m.rs_cells);
          m.rs_r_bytes = checked_add(m.rs_r_bytes, k);
          m.rs_s_bytes = checked_add(m.rs_s_bytes, v);
          ++rs_layers;
          break;
        }
        case AttentionKind::None: break;
      }
      uint64_t& here = a->kind == AttentionKind::LinearState ? m.layer_state_bytes[il] : m.layer_kv_bytes[il];
      here = checked_add(here, checked_add(k, v));
    }
  }
  // Logits for one output row per sequence during generation, f32.
  m.output_bytes = checked_product({model.vocab, 4, s.n_seq});

  auto add = [&](std::string id, std::string label, uint64_t bytes, std::string formula, std::string assumption) {
    m.lines.push_back({std::move(id), std::move(label), bytes, std::move(formula), std::move(assumption),
                       "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-kv-cache.cpp, llama-kv-cache-iswa.cpp, llama-memory-recurrent.cpp, llama-context.cpp (release v0.4.0)"});
  };
  if (full_layers) {
    add("llamacpp.kv", fmt::format("KV cache ({} layers, {} cells x {} stream(s))", full_layers, m.kv_cells, streams), m.kv_k_bytes + m.kv_v_bytes,
        fmt::format("K {} + V {} over {} cells per stream", format_count(m.kv_k_bytes), format_count(m.kv_v_bytes), m.kv_cells),
        "n_ctx is split evenly over -np sequences unless --kv-unified; MLA layers keep K only");
  }
  if (swa_layers) {
    add("llamacpp.swa", fmt::format("Sliding-window KV ({} layers, {} cells)", swa_layers, m.swa_cells), m.swa_k_bytes + m.swa_v_bytes,
        fmt::format("K {} + V {}", format_count(m.swa_k_bytes), format_count(m.swa_v_bytes)),
        s.swa_full ? "--swa-full keeps the whole context" : "window + ubatch tokens, padded to 256 cells");
  }
  if (rs_layers) {
    add("llamacpp.rs", fmt::format("Recurrent state ({} layers, {} sequence(s))", rs_layers, m.rs_cells), m.rs_r_bytes + m.rs_s_bytes,
        fmt::format("R {} + S {} (f32)", format_count(m.rs_r_bytes), format_count(m.rs_s_bytes)), "one f32 state row per sequence, independent of context");
  }
  LlamaCppComputeInput ci{s.n_ctx, m.n_ctx, s.n_seq, s.n_batch, s.n_ubatch, s.flash_attn, s.kv_unified, m.kv_cells, swa_layers ? m.swa_cells : 0,
                          tk.block_elems > 1, tv.block_elems > 1};
  LlamaCppCompute comp = llamacpp_compute(model, ci);
  m.compute_bytes = comp.bytes;
  m.lines.push_back({"llamacpp.compute", fmt::format("Compute buffer ({} tokens per ubatch, flash attention {})", comp.tokens, s.flash_attn ? "on" : "off"),
                     comp.bytes,
                     comp.graph_tensors
                         ? fmt::format("ggml-alloc's packing replayed over the reserved graph ({} tensors sized from the model): its peak",
                                       comp.graph_tensors)
                         : fmt::format("masks{} {} + largest phase ({}) {} + inputs 28 B x {} tokens",
                                       (ci.k_quantized || ci.v_quantized) ? " (with any K/V rotation matrices)" : "",
                                       format_count(comp.mask_bytes), comp.phase, format_count(comp.phase_bytes), comp.tokens),
                     "uncertain: a model or replay of ggml-alloc's peak (within 3% on 98% of measured CPU runs, within 10% on all, docs/accuracy.md); on GPU each device "
                     "holding layers reserves its own, and the CUDA backend's buffers are not the CPU's",
                     "https://github.com/ggml-org/llama.cpp/blob/master/src/llama-context.cpp (sched_reserve, graph_reserve) and ggml/src/ggml-alloc.c (release v0.4.0)"});
  add("llamacpp.output", "Output (logits) buffer", m.output_bytes, fmt::format("{} vocab x 4 B x {} sequence(s)", model.vocab, s.n_seq),
      "host memory; one row of logits per sequence while generating");
  return m;
}

}  // namespace vc
