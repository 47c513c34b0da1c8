// GGUF reader and GGUF -> Model mapper, on files the tests write (gguf_writer.h) and on the
// tiny models llama.cpp was measured on (written from their headers by tiny_gguf.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "gguf_writer.h"
#include "memory_source.h"
#include "sources/gguf/gguf_file.h"
#include "sources/gguf/gguf_model.h"
#include "sources/gguf/gguf_set.h"
#include "sources/gguf/gguf_split.h"
#include "tiny_gguf.h"

namespace vc {
namespace {

using testing::GgufWriter;
using testing::MemorySource;
namespace fs = std::filesystem;

// A llama-shaped model: 2 layers, hidden 64, 4 heads (head_dim 64/4 = 16), 2 kv heads,
// ffn 128, vocab 32. Bytes per tensor worked out by hand from the ggml block layouts
// (F32 4 B, F16 2 B, Q8_0 34 B per 32, Q4_0 18 B per 32):
//   token_embd [64,32] F16 = 64*32*2 = 4,096; output_norm [64] F32 = 256;
//   output [64,32] Q8_0 = 2 blocks * 34 * 32 rows = 2,176;
//   per layer: attn_norm 256 + attn_q [64,64] F16 8,192 + attn_k [64,32] 4,096 + attn_v 4,096
//   + attn_output 8,192 + ffn_norm 256 + ffn_gate [64,128] Q4_0 2*18*128 = 4,608 + ffn_up 4,608
//   + ffn_down [128,64] Q8_0 4*34*64 = 8,704 = 43,008.
//   total = 4,096 + 256 + 2,176 + 2 * 43,008 = 92,544 bytes.
// Params: embedding 2,048, output 2,048, norms 64 + 2*128 = 320, attention 2*12,288 = 24,576,
// dense MLP 2 * 3 * 8,192 = 49,152; total 78,144.
GgufWriter tiny_llama() {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.str("general.name", "Tiny Llama");
  w.u32("general.file_type", 15);  // llama.h LLAMA_FTYPE_MOSTLY_Q4_K_M
  w.u32("llama.block_count", 2);
  w.u32("llama.embedding_length", 64);
  w.u32("llama.attention.head_count", 4);
  w.u32("llama.attention.head_count_kv", 2);
  w.u32("llama.feed_forward_length", 128);
  w.u32("llama.context_length", 4096);
  w.f32("llama.rope.freq_base", 10000.0f);
  w.boolean("tokenizer.ggml.add_bos_token", true);
  w.str_array("tokenizer.ggml.tokens", std::vector<std::string>(32, "tok"));
  w.nested_array("test.nested", {{1, 2}, {3}});
  w.i32("test.negative", -7);
  w.tensor("token_embd.weight", {64, 32}, GgufWriter::F16, 4096);
  w.tensor("output_norm.weight", {64}, GgufWriter::F32, 256);
  w.tensor("output.weight", {64, 32}, GgufWriter::Q8_0, 2176);
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    w.tensor(b + "attn_norm.weight", {64}, GgufWriter::F32, 256);
    w.tensor(b + "attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
    w.tensor(b + "attn_k.weight", {64, 32}, GgufWriter::F16, 4096);
    w.tensor(b + "attn_v.weight", {64, 32}, GgufWriter::F16, 4096);
    w.tensor(b + "attn_output.weight", {64, 64}, GgufWriter::F16, 8192);
    w.tensor(b + "ffn_norm.weight", {64}, GgufWriter::F32, 256);
    w.tensor(b + "ffn_gate.weight", {64, 128}, GgufWriter::Q4_0, 4608);
    w.tensor(b + "ffn_up.weight", {64, 128}, GgufWriter::Q4_0, 4608);
    w.tensor(b + "ffn_down.weight", {128, 64}, GgufWriter::Q8_0, 8704);
  }
  return w;
}

std::string whole_file(const GgufWriter& w) {
  std::string h = w.header();
  h.resize(h.size() + w.data_bytes(), '\0');
  return h;
}

TEST(Gguf, ReadsGeneratedFileExactly) {
  MemorySource src(whole_file(tiny_llama()));
  GgufFile f = read_gguf(src);
  EXPECT_EQ(f.version, 3u);
  ASSERT_EQ(f.tensors.size(), 21u);
  EXPECT_EQ(f.tensor_bytes(), 92544u);
  EXPECT_EQ(f.find("general.architecture")->s, "llama");
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->count, 32u);
  const GgufValue* nested = f.find("test.nested");
  ASSERT_TRUE(nested && nested->is_array());
  ASSERT_EQ(nested->items.size(), 2u);
  EXPECT_EQ(nested->items[0].items[1].u, 2u);
  EXPECT_EQ(nested->items[1].items[0].u, 3u);
  EXPECT_EQ(f.find("test.negative")->i, -7);
  EXPECT_FALSE(f.find("test.negative")->as_u64().has_value());
  EXPECT_FLOAT_EQ(static_cast<float>(f.find("llama.rope.freq_base")->f), 10000.0f);
  // Header read only: the reader never touched the tensor data.
  EXPECT_LE(src.bytes_fetched(), src.size());
}

TEST(Gguf, MapsGeneratedFileToModel) {
  MemorySource src(whole_file(tiny_llama()));
  Model m = model_from_gguf({read_gguf(src)});
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.name, "Tiny Llama");
  ASSERT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::Full);
  EXPECT_EQ(m.layers[0].attention.kv_heads, 2u);
  EXPECT_EQ(m.layers[0].attention.head_dim_k, 16u);  // 64 / 4 heads, no key_length key
  EXPECT_EQ(m.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(m.layers[0].feed_forward.dense_width, 128u);
  EXPECT_TRUE(m.layers[0].feed_forward.gated);  // ffn_gate, ffn_up, ffn_down
  EXPECT_EQ(m.vocab, 32u);  // from tokenizer.ggml.tokens
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.max_context, 4096u);
  EXPECT_EQ(m.native.bytes, 92544u);
  EXPECT_TRUE(m.native.measured);
  EXPECT_EQ(m.native.format, "Q4_K_M");
  EXPECT_EQ(m.params.derived_total, 78144u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Attention), 24576u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::DenseMlp), 49152u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Norms), 320u);
  EXPECT_EQ(m.params.derived_active, 78144u - 2048u);  // the input embedding is a lookup
}

TEST(Gguf, SplitNames) {
  auto names = gguf_split_names("dir/m-00002-of-00003.gguf");
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "dir/m-00001-of-00003.gguf");
  EXPECT_EQ(names[2], "dir/m-00003-of-00003.gguf");
  EXPECT_EQ(gguf_split_names("m.gguf").size(), 1u);
  EXPECT_THROW(gguf_split_names("m-00004-of-00003.gguf"), InputError);
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("vramcalc-test-" + name + "-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

// Two split files: part 1 holds the metadata and token_embd (4,096 B), part 2 the output
// norm (256 B); the set's weights are their sum, 4,352 B.
TEST(Gguf, ReadsSplitSetAndNamesMissingPart) {
  fs::path dir = temp_dir("split");
  GgufWriter a;
  a.str("general.architecture", "llama");
  a.u32("llama.block_count", 1);
  a.u32("llama.embedding_length", 64);
  a.u32("llama.attention.head_count", 4);
  a.u32("split.no", 0);
  a.u32("split.count", 2);
  a.tensor("token_embd.weight", {64, 32}, GgufWriter::F16, 4096);
  a.write(dir / "m-00001-of-00002.gguf");
  GgufWriter b;
  b.u32("split.no", 1);
  b.u32("split.count", 2);
  b.tensor("output_norm.weight", {64}, GgufWriter::F32, 256);
  Opener open = [](const std::string& p) { return open_file_source(p); };
  EXPECT_THROW(
      {
        try {
          read_gguf_set((dir / "m-00001-of-00002.gguf").string(), open);
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("m-00002-of-00002.gguf"), std::string::npos) << e.what();
          throw;
        }
      },
      InputError);
  b.write(dir / "m-00002-of-00002.gguf");
  GgufSet set = read_gguf_set((dir / "m-00002-of-00002.gguf").string(), open);
  ASSERT_EQ(set.files.size(), 2u);
  Model m = model_from_gguf(set.files);
  EXPECT_EQ(m.native.bytes, 4352u);
  fs::remove_all(dir);
}

// Every truncation of a valid file fails with an InputError naming it; every single-byte
// corruption of the header either parses or fails with an InputError, never anything else.
TEST(Gguf, TruncatedOrCorruptHeadersAreInputErrors) {
  const std::string good = whole_file(tiny_llama());
  const size_t header = tiny_llama().header().size();
  for (size_t n = 0; n < good.size(); n += (n < header ? 1 : 997)) {
    MemorySource src(good.substr(0, n), "cut.gguf");
    try {
      read_gguf(src);
      ADD_FAILURE() << "a file cut to " << n << " bytes was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.subject(), "cut.gguf");
    }
  }
  for (size_t i = 0; i < header; ++i) {
    for (unsigned flip : {0xffu, 0x80u, 0x01u}) {
      std::string bad = good;
      bad[i] = static_cast<char>(static_cast<unsigned>(static_cast<unsigned char>(bad[i])) ^ flip);
      MemorySource src(bad, "bad.gguf");
      try {
        GgufFile f = read_gguf(src);
        model_from_gguf({f});
      } catch (const InputError&) {
      } catch (const OverflowError&) {
      }
    }
  }
}

TEST(Gguf, RejectsWrongMagicVersionAndHugeCounts) {
  std::string good = whole_file(tiny_llama());
  std::string magic = good;
  magic[0] = 'X';
  MemorySource a(magic);
  EXPECT_THROW(read_gguf(a), InputError);
  std::string v1 = good;
  v1[4] = 1;
  MemorySource b(v1);
  EXPECT_THROW(read_gguf(b), InputError);
  std::string many = good;
  for (int i = 8; i < 16; ++i) many[static_cast<size_t>(i)] = '\x7f';  // tensor count ~ 9e18
  MemorySource c(many);
  EXPECT_THROW(read_gguf(c), InputError);
}

// Offsets past the end and byte counts that overflow 64 bits.
TEST(Gguf, RejectsTensorsPastTheEndAndOverflowingSizes) {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.tensor("huge", {uint64_t{1} << 40, uint64_t{1} << 30}, GgufWriter::F32, 0);
  MemorySource src(w.header());
  EXPECT_THROW(read_gguf(src), InputError);
  GgufWriter past;
  past.str("general.architecture", "llama");
  past.tensor("t", {64}, GgufWriter::F32, 256);
  MemorySource s2(past.header());  // no data section
  EXPECT_THROW(read_gguf(s2), InputError);
}

// The reader names fields only when a read fails (bench/ measured building the names per read);
// the messages must still say which field ran out, and which tensor name came twice.
TEST(Gguf, NamesTheFieldThatRunsOutAndTheDuplicateTensor) {
  GgufWriter w;
  w.str("general.name", "x");
  // Layout (GGUF v3): magic 4 + version 4 + tensor count 8 + key count 8 = 24; key length 8 +
  // "general.name" 12 = 44; value type 4 = 48; the string's 8-byte length starts at offset 48.
  MemorySource cut(w.header().substr(0, 50), "cut.gguf");
  try {
    read_gguf(cut);
    ADD_FAILURE() << "a header cut inside a string length was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "cut.gguf: is truncated or corrupt: metadata 'general.name' length at offset 48 needs 8 bytes but only 2 remain");
  }
  GgufWriter dup;
  dup.tensor("blk.0.attn_q.weight", {64}, GgufWriter::F32, 256);  // 64 x 4 B
  dup.tensor("blk.0.attn_k.weight", {64}, GgufWriter::F32, 256);
  dup.tensor("blk.0.attn_q.weight", {64}, GgufWriter::F32, 256);
  MemorySource twice(whole_file(dup), "dup.gguf");
  try {
    read_gguf(twice);
    ADD_FAILURE() << "a header naming one tensor twice was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "dup.gguf: has tensor 'blk.0.attn_q.weight' twice");
  }
}

// --- the tiny models llama.cpp was measured on ----------------------------------------------

std::vector<GgufFile> read_tiny(const std::string& file) {
  auto src = open_file_source(testing::tiny_gguf(file).string());
  return {read_gguf(*src)};
}

// Every tensor of every tiny model: name, shape, type and bytes as its tensor table lists them
// (the bytes and file size were listed with the original files; the reader works them out from
// shape and type); the sum equals llama.cpp's llama_model_size and its element count
// llama_model_n_params; the data span (with 32-byte padding) equals the CPU_Mapped model buffer
// llama.cpp allocated.
TEST(GgufReference, TensorsMatchTensorsJsonAndLlamaCppBuffers) {
  const auto& tensors = testing::tiny_models().at("models");
  const auto runs = testing::read_test_json("llamacpp/runs.json").at("runs");
  ASSERT_GE(tensors.size(), 9u);
  for (const auto& [file, ref] : tensors.items()) {
    SCOPED_TRACE(file);
    auto files = read_tiny(file);
    const GgufFile& f = files.front();
    ASSERT_EQ(f.tensors.size(), ref.at("tensors").size());
    EXPECT_EQ(f.file_size, ref.at("file_bytes").get<uint64_t>());
    for (size_t i = 0; i < f.tensors.size(); ++i) {
      const auto& rt = ref.at("tensors").at(i);  // [name, ne, type, bytes]
      EXPECT_EQ(f.tensors[i].name, rt.at(0).get<std::string>());
      EXPECT_EQ(f.tensors[i].ne, rt.at(1).get<std::vector<uint64_t>>());
      EXPECT_EQ(f.tensors[i].type_name, rt.at(2).get<std::string>());
      EXPECT_EQ(f.tensors[i].bytes, rt.at(3).get<uint64_t>());
    }
    Model m = model_from_gguf(files);
    EXPECT_EQ(m.native.bytes, ref.at("tensor_bytes").get<uint64_t>());
    EXPECT_EQ(m.architecture, ref.at("arch").get<std::string>());
    bool found = false;
    for (const auto& run : runs) {
      if (run.at("model_file") != file || !run.contains("measured_bytes") || run.at("measured_bytes").is_null()) continue;
      const auto& mb = run.at("measured_bytes");
      EXPECT_EQ(m.native.bytes, mb.at("model_size_bytes").get<uint64_t>());
      EXPECT_EQ(m.params.derived_total, mb.at("n_params").get<uint64_t>());
      EXPECT_EQ(f.data_span(), mb.at("buffers").at("CPU_Mapped").at("model").get<uint64_t>());
      found = true;
      break;
    }
    EXPECT_TRUE(found);
  }
}

// Geometry read from the metadata, checked against what llama.cpp allocated: at c=4096, f16
// cache, one sequence, its CPU context buffer (KV cache + recurrent state, f32) equals the sum
// over layers of our per-layer figures.
TEST(GgufReference, GeometryReproducesLlamaCppContextBuffers) {
  const auto runs = testing::read_test_json("llamacpp/runs.json").at("runs");
  for (const char* file : {"tiny-llama.gguf", "tiny-qwen3.gguf", "tiny-deepseek2.gguf", "tiny-qwen3moe.gguf", "tiny-mamba2.gguf",
                           "tiny-qwen3next.gguf", "tiny-kimi-linear.gguf"}) {
    SCOPED_TRACE(file);
    Model m = model_from_gguf(read_tiny(file));
    uint64_t bytes = 0;
    for (const auto& l : m.layers) {
      const AttentionSpec& a = l.attention;
      if (a.kind == AttentionKind::LinearState) bytes += (a.state_values + a.conv_values) * 4;
      else bytes += a.values_per_token() * 2 * 4096;
    }
    uint64_t measured = 0;
    for (const auto& run : runs) {
      if (run.at("model_file") == file && run.at("variant") == "c4096-fa_on") measured = run.at("measured_bytes").at("buffers").at("CPU").at("context").get<uint64_t>();
    }
    EXPECT_EQ(bytes, measured);
  }
}

TEST(GgufReference, LayerKindsPerFamily) {
  Model gemma = model_from_gguf(read_tiny("tiny-gemma3.gguf"));  // pattern 6: 5 local + 1 global
  ASSERT_EQ(gemma.layers.size(), 6u);
  EXPECT_EQ(gemma.layer_count(AttentionKind::SlidingWindow), 5u);
  EXPECT_EQ(gemma.layers[5].attention.kind, AttentionKind::Full);
  EXPECT_EQ(gemma.layers[0].attention.window, 512u);
  EXPECT_TRUE(gemma.tied_embeddings);

  Model oss = model_from_gguf(read_tiny("tiny-gpt-oss.gguf"));  // SWA 128 on even layers
  EXPECT_EQ(oss.layers[0].attention.kind, AttentionKind::SlidingWindow);
  EXPECT_EQ(oss.layers[1].attention.kind, AttentionKind::Full);
  EXPECT_EQ(oss.layers[0].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(oss.layers[0].feed_forward.experts, 8u);
  EXPECT_NE(oss.native.note.find("MXFP4"), std::string::npos) << oss.native.note;  // experts in MXFP4

  Model ds = model_from_gguf(read_tiny("tiny-deepseek2.gguf"));  // kv_lora 128 + rope 32, 1 dense + 2 MoE
  EXPECT_EQ(ds.layers[0].attention.kind, AttentionKind::Latent);
  EXPECT_EQ(ds.layers[0].attention.latent_rank, 128u);
  EXPECT_EQ(ds.layers[0].attention.rope_dim, 32u);
  EXPECT_EQ(ds.layers[0].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(ds.layers[1].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_EQ(ds.layers[1].feed_forward.expert_width, 64u);
  EXPECT_EQ(ds.layers[1].feed_forward.shared_width, 64u);

  Model next = model_from_gguf(read_tiny("tiny-qwen3next.gguf"));  // 3 GDN + 1 full
  EXPECT_EQ(next.layer_count(AttentionKind::LinearState), 3u);
  EXPECT_EQ(next.layers[3].attention.kind, AttentionKind::Full);
  EXPECT_EQ(next.layers[0].attention.state_family, vc::StateFamily::GatedDeltaNet);

  Model kimi = model_from_gguf(read_tiny("tiny-kimi-linear.gguf"));  // 3 KDA + 1 MLA
  EXPECT_EQ(kimi.layer_count(AttentionKind::LinearState), 3u);
  EXPECT_EQ(kimi.layers[3].attention.kind, AttentionKind::Latent);
  EXPECT_EQ(kimi.layers[0].attention.state_values, 4u * 32 * 32);  // heads * head_dim^2
}

}  // namespace
}  // namespace vc

namespace vc {
namespace {

// A Nemotron-H-like hybrid: layer 0 Mamba2 (ssm_* tensors), layer 1 attention, layer 2 MLP
// only. head_count_kv is per layer [0, 2, 0]. Mamba2 state per layer (reference/architectures.md
// section 7): d_inner 128 x d_state 16 = 2,048 values; conv (4 - 1) x (128 + 2 x 1 group x 16) = 480.
TEST(Gguf, HybridLayersFromTensorsAndPerLayerArrays) {
  GgufWriter w;
  w.str("general.architecture", "nemotron_h");
  w.u32("nemotron_h.block_count", 3);
  w.u32("nemotron_h.embedding_length", 64);
  w.u32("nemotron_h.attention.head_count", 4);
  w.u32_array("nemotron_h.attention.head_count_kv", {0, 2, 0});
  w.u32("nemotron_h.attention.key_length", 16);
  w.u32("nemotron_h.ssm.conv_kernel", 4);
  w.u32("nemotron_h.ssm.inner_size", 128);
  w.u32("nemotron_h.ssm.state_size", 16);
  w.u32("nemotron_h.ssm.group_count", 1);
  w.tensor("blk.0.ssm_in.weight", {64, 128}, GgufWriter::F16, 16384);
  w.tensor("blk.1.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.tensor("blk.2.ffn_up.weight", {64, 256}, GgufWriter::F16, 32768);
  w.tensor("blk.2.ffn_down.weight", {256, 64}, GgufWriter::F16, 32768);
  MemorySource src(whole_file(w));
  Model m = model_from_gguf({read_gguf(src)});
  ASSERT_EQ(m.layers.size(), 3u);
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::LinearState);
  EXPECT_EQ(m.layers[0].attention.state_family, vc::StateFamily::Mamba2);
  EXPECT_EQ(m.layers[0].attention.state_values, 2048u);
  EXPECT_EQ(m.layers[0].attention.conv_values, 480u);
  EXPECT_EQ(m.layers[1].attention.kind, AttentionKind::Full);
  EXPECT_EQ(m.layers[1].attention.kv_heads, 2u);
  EXPECT_FALSE(m.layers[1].attention.rotary);  // Nemotron-H's attention has no RoPE (nemotron-h.cpp)
  EXPECT_EQ(m.layers[2].attention.kind, AttentionKind::None);
  EXPECT_EQ(m.layers[2].feed_forward.kind, FeedForwardKind::Dense);
  EXPECT_EQ(m.layers[2].feed_forward.dense_width, 256u);
  EXPECT_FALSE(m.layers[2].feed_forward.gated);  // ffn_up [64,256] and ffn_down, no ffn_gate
  EXPECT_EQ(m.native.bytes, 16384u + 8192u + 32768u + 32768u);
}

// Whether a dense MLP is gated, from its tensors: ffn_gate present (block 0), gate and up fused in
// one ffn_up of 2 x the width rows as phi3 and chatglm store them (block 1: [64, 256] against
// ffn_down's width 128), or neither, two matrices (block 2: ffn_up [64, 128], as phi2 and
// starcoder2 store them). Expert blocks: ffn_gate_exps present (block 3) or not (block 4, as
// nemotron_h_moe stores its experts).
TEST(Gguf, GatedFeedForwardFromTensors) {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.u32("llama.block_count", 5);
  w.u32("llama.embedding_length", 64);
  w.u32("llama.attention.head_count", 4);
  w.u32("llama.expert_count", 4);
  w.u32("llama.expert_used_count", 2);
  w.tensor("blk.0.ffn_gate.weight", {64, 128}, GgufWriter::F16, 16384);
  w.tensor("blk.0.ffn_up.weight", {64, 128}, GgufWriter::F16, 16384);
  w.tensor("blk.0.ffn_down.weight", {128, 64}, GgufWriter::F16, 16384);
  w.tensor("blk.1.ffn_up.weight", {64, 256}, GgufWriter::F16, 32768);
  w.tensor("blk.1.ffn_down.weight", {128, 64}, GgufWriter::F16, 16384);
  w.tensor("blk.2.ffn_up.weight", {64, 128}, GgufWriter::F16, 16384);
  w.tensor("blk.2.ffn_down.weight", {128, 64}, GgufWriter::F16, 16384);
  w.tensor("blk.3.ffn_gate_inp.weight", {64, 4}, GgufWriter::F32, 1024);
  w.tensor("blk.3.ffn_gate_exps.weight", {64, 32, 4}, GgufWriter::F16, 16384);
  w.tensor("blk.3.ffn_up_exps.weight", {64, 32, 4}, GgufWriter::F16, 16384);
  w.tensor("blk.3.ffn_down_exps.weight", {32, 64, 4}, GgufWriter::F16, 16384);
  w.tensor("blk.4.ffn_gate_inp.weight", {64, 4}, GgufWriter::F32, 1024);
  w.tensor("blk.4.ffn_up_exps.weight", {64, 32, 4}, GgufWriter::F16, 16384);
  w.tensor("blk.4.ffn_down_exps.weight", {32, 64, 4}, GgufWriter::F16, 16384);
  MemorySource src(whole_file(w));
  Model m = model_from_gguf({read_gguf(src)});
  ASSERT_EQ(m.layers.size(), 5u);
  EXPECT_TRUE(m.layers[0].feed_forward.gated);
  EXPECT_TRUE(m.layers[1].feed_forward.gated);
  EXPECT_EQ(m.layers[1].feed_forward.dense_width, 128u);
  EXPECT_FALSE(m.layers[2].feed_forward.gated);
  EXPECT_EQ(m.layers[2].feed_forward.dense_width, 128u);
  ASSERT_EQ(m.layers[3].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_TRUE(m.layers[3].feed_forward.gated);
  ASSERT_EQ(m.layers[4].feed_forward.kind, FeedForwardKind::MoE);
  EXPECT_FALSE(m.layers[4].feed_forward.gated);
  EXPECT_EQ(m.layers[4].feed_forward.expert_width, 32u);
}

// Granite reads rope.scaling.finetuned as its RoPE switch, true when the key is absent
// (llama-model.cpp load_hparams: "Granite uses rope_finetuned as a switch for rope, so default to
// true"); convert_hf_to_gguf writes false for the Mamba-2 hybrids (Granite 4.0 H).
TEST(Gguf, GraniteRopeSwitch) {
  auto attention_rotates = [](std::optional<bool> finetuned) {
    GgufWriter w;
    w.str("general.architecture", "granitehybrid");
    w.u32("granitehybrid.block_count", 1);
    w.u32("granitehybrid.embedding_length", 64);
    w.u32("granitehybrid.attention.head_count", 4);
    w.u32("granitehybrid.attention.head_count_kv", 2);
    if (finetuned) w.boolean("granitehybrid.rope.scaling.finetuned", *finetuned);
    w.tensor("blk.0.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
    MemorySource src(whole_file(w));
    const Model m = model_from_gguf({read_gguf(src)});
    EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::Full);
    return m.layers[0].attention.rotary;
  };
  EXPECT_TRUE(attention_rotates(std::nullopt));
  EXPECT_TRUE(attention_rotates(true));
  EXPECT_FALSE(attention_rotates(false));
}

// GLM-4.5-style MTP: block_count 2 includes one nextn block, so the stack has 1 layer and the
// block-1 tensors (attn_q 4,096 params, nextn.eh_proj 8,192) are the MTP head, not active.
TEST(Gguf, NextnBlocksAreMtpNotLayers) {
  GgufWriter w;
  w.str("general.architecture", "glm4moe");
  w.u32("glm4moe.block_count", 2);
  w.u32("glm4moe.nextn_predict_layers", 1);
  w.u32("glm4moe.embedding_length", 64);
  w.u32("glm4moe.attention.head_count", 4);
  w.u32("glm4moe.attention.head_count_kv", 1);
  w.tensor("blk.0.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.tensor("blk.1.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.tensor("blk.1.nextn.eh_proj.weight", {128, 64}, GgufWriter::F16, 16384);
  MemorySource src(whole_file(w));
  Model m = model_from_gguf({read_gguf(src)});
  EXPECT_EQ(m.layers.size(), 1u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Mtp), 4096u + 8192u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Attention), 4096u);
  EXPECT_EQ(m.params.derived_active, 4096u);
  EXPECT_EQ(m.native.bytes, 8192u + 8192u + 16384u);  // MTP weights are still in the file
}

// A DeepSeek-V3.2-style indexer adds its key width to the latent cache.
TEST(Gguf, LatentWithIndexerKeys) {
  GgufWriter w;
  w.str("general.architecture", "deepseek32");
  w.u32("deepseek32.block_count", 1);
  w.u32("deepseek32.embedding_length", 64);
  w.u32("deepseek32.attention.head_count", 4);
  w.u32("deepseek32.attention.kv_lora_rank", 512);
  w.u32("deepseek32.rope.dimension_count", 64);
  w.u32("deepseek32.attention.indexer.key_length", 128);
  w.u32("deepseek32.attention.indexer.top_k", 2048);
  w.tensor("blk.0.attn_kv_a_mqa.weight", {64, 576}, GgufWriter::F16, 73728);
  MemorySource src(whole_file(w));
  Model m = model_from_gguf({read_gguf(src)});
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::Latent);
  EXPECT_EQ(m.layers[0].attention.values_per_token(), 512u + 64u + 128u);  // reference/architectures.md section 4
  EXPECT_EQ(m.layers[0].attention.index_topk, 2048u);
}

// DeepSeek GGUFs as convert_hf_to_gguf.py writes them now: key_length = kv_lora + rope (the latent
// row), head_count_kv 1, and the per-head widths in key_length_mla / value_length_mla; llama.cpp
// caches the 32 + 8 = 40-value latent row. The projections' widths come back as config.json names
// them: q_lora_rank 24, qk_nope = 24 - 8 = 16, v_head_dim 16. A file converted before MLA (no _mla
// keys, key_length 24 = nope + rope below kv_lora_rank 32, head_count_kv 4) is cached as plain
// attention, 4 x (24 + 16) = 160 values a token (llama.cpp src/models/deepseek2.cpp, is_mla).
TEST(Gguf, DeepSeekMlaWidthsAndTheLegacyLayout) {
  auto file = [](bool mla) {
    GgufWriter w;
    w.str("general.architecture", "deepseek2");
    w.u32("deepseek2.block_count", 1);
    w.u32("deepseek2.embedding_length", 64);
    w.u32("deepseek2.attention.head_count", 4);
    w.u32("deepseek2.attention.head_count_kv", mla ? 1 : 4);
    w.u32("deepseek2.attention.key_length", mla ? 40 : 24);
    w.u32("deepseek2.attention.value_length", mla ? 32 : 16);
    if (mla) {
      w.u32("deepseek2.attention.key_length_mla", 24);
      w.u32("deepseek2.attention.value_length_mla", 16);
    }
    w.u32("deepseek2.attention.q_lora_rank", 24);
    w.u32("deepseek2.attention.kv_lora_rank", 32);
    w.u32("deepseek2.rope.dimension_count", 8);
    w.tensor("blk.0.attn_kv_a_mqa.weight", {64, 40}, GgufWriter::F16, 5120);
    MemorySource src(whole_file(w));
    return model_from_gguf({read_gguf(src)});
  };
  const Model now = file(true);
  const AttentionSpec& a = now.layers[0].attention;
  EXPECT_EQ(a.kind, AttentionKind::Latent);
  EXPECT_EQ(a.values_per_token(), 40u);
  EXPECT_EQ(a.query_rank, 24u);
  EXPECT_EQ(a.nope_dim, 16u);
  EXPECT_EQ(a.value_dim, 16u);
  const Model legacy = file(false);
  const AttentionSpec& l = legacy.layers[0].attention;
  EXPECT_EQ(l.kind, AttentionKind::Full);
  EXPECT_EQ(l.kv_heads, 4u);
  EXPECT_EQ(l.values_per_token(), 160u);
}

// GLM-5.2's indexer layout as llama.cpp reads a glm-dsa GGUF (src/models/glm-dsa.cpp): without
// attention.indexer.types, a model trained to 1M tokens or more keeps index keys on layers 0 and 1
// and every 4th from 2 (GLM_5_2_DEFAULT_INDEXER_TYPES); below 1M (GLM-5, 5.1) on every layer; with
// the key, where it says. Eight hand-made layers: 0, 1, 2 and 6 by default.
TEST(Gguf, GlmDsaIndexerTypes) {
  auto dsa = [](uint32_t trained_context, const std::vector<uint32_t>& types) {
    GgufWriter w;
    w.str("general.architecture", "glm-dsa");
    w.u32("glm-dsa.block_count", 8);
    w.u32("glm-dsa.embedding_length", 64);
    w.u32("glm-dsa.attention.head_count", 4);
    w.u32("glm-dsa.attention.kv_lora_rank", 32);
    w.u32("glm-dsa.rope.dimension_count", 16);
    w.u32("glm-dsa.attention.indexer.key_length", 32);
    w.u32("glm-dsa.attention.indexer.top_k", 64);
    w.u32("glm-dsa.context_length", trained_context);
    if (!types.empty()) w.u32_array("glm-dsa.attention.indexer.types", types);
    w.tensor("token_embd.weight", {64, 32}, GgufWriter::F16, 4096);
    for (int l = 0; l < 8; ++l) w.tensor("blk." + std::to_string(l) + ".attn_kv_a_mqa.weight", {64, 48}, GgufWriter::F16, 6144);
    MemorySource src(whole_file(w));
    Model m = model_from_gguf({read_gguf(src)});
    std::vector<uint32_t> indexed;
    for (uint32_t il = 0; il < m.layers.size(); ++il) {
      if (m.layers[il].attention.index_key_dim) indexed.push_back(il);
    }
    return indexed;
  };
  EXPECT_EQ(dsa(1048576, {}), (std::vector<uint32_t>{0, 1, 2, 6}));
  EXPECT_EQ(dsa(202752, {}), (std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(dsa(1048576, {1, 0, 0, 0, 0, 0, 0, 1}), (std::vector<uint32_t>{0, 7}));
}

}  // namespace
}  // namespace vc
