#pragma once
// Checkpoint headers the reader benchmarks (and bench/compare-gguf-js.sh, bench/peak-memory.sh)
// read: written by the benchmark itself, tensor data left as a hole so the files cost no disk.
// Built with the test writers (tests/gguf_writer.h, tests/safetensors_writer.h).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../tests/gguf_writer.h"
#include "../tests/safetensors_writer.h"

namespace vc::bench {

// A GGUF header with `blocks` x (7 + 3 x `experts`) + 3 tensors and a 262,144-entry tokenizer
// (Gemma 3's vocabulary size): tokens, scores and token types, three arrays of that length. The
// geometry is Mixtral's (hidden 4096, expert width 14336, 8 kv heads) with experts stored one
// tensor each, the layout llama.cpp's first Mixtral conversions wrote (blk.N.ffn_gate.E.weight).
// Q4_K: 144 bytes per 256 values (ggml-common.h block_q4_K).
struct GgufFixture {
  uint64_t blocks;
  uint64_t experts;
  uint64_t tensors() const { return blocks * (7 + 3 * experts) + 3; }
};

inline constexpr uint64_t kFixtureVocab = 262144;

// The three sizes measured: 995, 9,953 and 99,978 tensors.
inline constexpr GgufFixture kGgufFixtures[] = {{32, 8}, {50, 64}, {129, 256}};

inline uint64_t write_gguf_fixture(const std::filesystem::path& path, const GgufFixture& fx) {
  using vc::testing::GgufWriter;
  constexpr uint64_t hidden = 4096, width = 14336, kv = 1024, vocab = kFixtureVocab;
  auto q4k = [](uint64_t a, uint64_t b) { return a * b / 256 * 144; };
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.str("general.name", "vramcalc bench fixture");
  w.u32("general.file_type", 15);  // llama.h LLAMA_FTYPE_MOSTLY_Q4_K_M
  w.u32("llama.block_count", static_cast<uint32_t>(fx.blocks));
  w.u32("llama.embedding_length", hidden);
  w.u32("llama.attention.head_count", 32);
  w.u32("llama.attention.head_count_kv", 8);
  w.u32("llama.feed_forward_length", width);
  w.u32("llama.expert_count", static_cast<uint32_t>(fx.experts));
  w.u32("llama.expert_used_count", 2);
  w.u32("llama.context_length", 32768);
  w.str("tokenizer.ggml.model", "llama");
  std::vector<std::string> tokens(vocab);
  for (uint64_t i = 0; i < vocab; ++i) tokens[i] = "<tok" + std::to_string(i) + ">";
  w.str_array("tokenizer.ggml.tokens", tokens);
  w.u32_array("tokenizer.ggml.scores", std::vector<uint32_t>(vocab, 0));       // f32 0.0 bits; written as u32 (same width)
  w.u32_array("tokenizer.ggml.token_type", std::vector<uint32_t>(vocab, 1));   // as i32 in real files; same width
  w.tensor("token_embd.weight", {hidden, vocab}, GgufWriter::Q4_K, q4k(hidden, vocab));
  w.tensor("output_norm.weight", {hidden}, GgufWriter::F32, hidden * 4);
  w.tensor("output.weight", {hidden, vocab}, GgufWriter::Q6_K, hidden * vocab / 256 * 210);  // block_q6_K: 210 B
  for (uint64_t l = 0; l < fx.blocks; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    w.tensor(b + "attn_norm.weight", {hidden}, GgufWriter::F32, hidden * 4);
    w.tensor(b + "attn_q.weight", {hidden, hidden}, GgufWriter::Q4_K, q4k(hidden, hidden));
    w.tensor(b + "attn_k.weight", {hidden, kv}, GgufWriter::Q4_K, q4k(hidden, kv));
    w.tensor(b + "attn_v.weight", {hidden, kv}, GgufWriter::Q4_K, q4k(hidden, kv));
    w.tensor(b + "attn_output.weight", {hidden, hidden}, GgufWriter::Q4_K, q4k(hidden, hidden));
    w.tensor(b + "ffn_norm.weight", {hidden}, GgufWriter::F32, hidden * 4);
    w.tensor(b + "ffn_gate_inp.weight", {hidden, fx.experts}, GgufWriter::F32, hidden * fx.experts * 4);
    for (uint64_t e = 0; e < fx.experts; ++e) {
      const std::string x = "." + std::to_string(e) + ".weight";
      w.tensor(b + "ffn_gate" + x, {hidden, width}, GgufWriter::Q4_K, q4k(hidden, width));
      w.tensor(b + "ffn_up" + x, {hidden, width}, GgufWriter::Q4_K, q4k(hidden, width));
      w.tensor(b + "ffn_down" + x, {width, hidden}, GgufWriter::Q4_K, q4k(width, hidden));
    }
  }
  w.write(path);
  return w.header().size();
}

// A safetensors checkpoint folder: config.json (Qwen3-30B-A3B's geometry, Qwen/Qwen3-30B-A3B
// config.json: hidden 2048, 32 heads, 4 kv heads, head_dim 128, 128 experts of width 768, top 8),
// model.safetensors.index.json and `shards` shards of two decoder layers each, 393 tensors per
// layer (q/k/v/o, q/k norms, two layer norms, router, 128 x gate/up/down), BF16.
inline constexpr uint64_t kLayersPerShard = 2;
inline constexpr uint64_t kShardCounts[] = {4, 16, 64};

inline void write_safetensors_fixture(const std::filesystem::path& dir, uint64_t shards) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  constexpr uint64_t hidden = 2048, heads = 32, kv_heads = 4, head_dim = 128, experts = 128, width = 768, vocab = 151936;
  const uint64_t layers = shards * kLayersPerShard;
  {
    std::ofstream cfg(dir / "config.json");
    cfg << R"({"model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048,
      "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
      "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
      "mlp_only_layers": [], "vocab_size": 151936, "max_position_embeddings": 40960, "tie_word_embeddings": false,
      "torch_dtype": "bfloat16", "num_hidden_layers": )"
        << layers << "}";
  }
  nlohmann::json index = {{"metadata", nlohmann::json::object()}, {"weight_map", nlohmann::json::object()}};
  auto name_of = [shards](uint64_t s) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "model-%05llu-of-%05llu.safetensors", static_cast<unsigned long long>(s + 1),
                  static_cast<unsigned long long>(shards));
    return std::string(buf);
  };
  for (uint64_t s = 0; s < shards; ++s) {
    vc::testing::SafetensorsWriter w;
    auto add = [&](const std::string& t, std::vector<uint64_t> shape) {
      uint64_t n = 2;
      for (uint64_t d : shape) n *= d;
      w.tensor(t, "BF16", shape, n);
      index["weight_map"][t] = name_of(s);
    };
    if (s == 0) add("model.embed_tokens.weight", {vocab, hidden});
    if (s + 1 == shards) {
      add("model.norm.weight", {hidden});
      add("lm_head.weight", {vocab, hidden});
    }
    for (uint64_t l = s * kLayersPerShard; l < (s + 1) * kLayersPerShard; ++l) {
      const std::string p = "model.layers." + std::to_string(l) + ".";
      add(p + "self_attn.q_proj.weight", {heads * head_dim, hidden});
      add(p + "self_attn.k_proj.weight", {kv_heads * head_dim, hidden});
      add(p + "self_attn.v_proj.weight", {kv_heads * head_dim, hidden});
      add(p + "self_attn.o_proj.weight", {hidden, heads * head_dim});
      add(p + "self_attn.q_norm.weight", {head_dim});
      add(p + "self_attn.k_norm.weight", {head_dim});
      add(p + "input_layernorm.weight", {hidden});
      add(p + "post_attention_layernorm.weight", {hidden});
      add(p + "mlp.gate.weight", {experts, hidden});
      for (uint64_t e = 0; e < experts; ++e) {
        const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
        add(x + "gate_proj.weight", {width, hidden});
        add(x + "up_proj.weight", {width, hidden});
        add(x + "down_proj.weight", {hidden, width});
      }
    }
    w.write(dir / name_of(s));
  }
  std::ofstream(dir / "model.safetensors.index.json") << index.dump();
}

}  // namespace vc::bench
