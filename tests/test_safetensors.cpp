// safetensors header reader, shard sets, tensor classification and the folder -> Model path,
// on files the tests write (safetensors_writer.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "memory_source.h"
#include "safetensors_writer.h"
#include "sources/checkpoint.h"
#include "sources/resolver.h"
#include "sources/safetensors/safetensors_file.h"
#include "sources/safetensors/safetensors_model.h"
#include "sources/safetensors/safetensors_set.h"
#include "sources/tensor_classes.h"

namespace vc {
namespace {

using testing::MemorySource;
using testing::SafetensorsWriter;
namespace fs = std::filesystem;

// A minimal Kimi Linear config (the mapper this branch has): 2 decoder layers, the second MLA
// (full_attn_layers is 1-indexed), 4 experts of which 2 are used from layer 1 on.
const char* kConfig = R"({"model_type": "kimi_linear", "num_hidden_layers": 2, "hidden_size": 64, "vocab_size": 32,
  "num_attention_heads": 4, "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
  "linear_attn_config": {"num_heads": 2, "head_dim": 8, "full_attn_layers": [2]},
  "num_experts": 4, "num_experts_per_token": 2, "moe_intermediate_size": 16, "intermediate_size": 32,
  "first_k_dense_replace": 1, "torch_dtype": "bfloat16"})";

// Shard 1 (12,544 B): embed_tokens BF16 [32,64] 4,096 B; layer-0 q_proj BF16 [32,64] 4,096 B;
// layer-0 gate_proj BF16 [32,64] 4,096 B; layer-0 input_layernorm F32 [64] 256 B.
SafetensorsWriter shard1() {
  SafetensorsWriter w;
  w.metadata("format", "pt");
  w.tensor("model.embed_tokens.weight", "BF16", {32, 64}, 4096);
  w.tensor("model.layers.0.self_attn.q_proj.weight", "BF16", {32, 64}, 4096);
  w.tensor("model.layers.0.mlp.gate_proj.weight", "BF16", {32, 64}, 4096);
  w.tensor("model.layers.0.input_layernorm.weight", "F32", {64}, 256);
  return w;
}

// Shard 2 (25,732 B): two FP8 experts [16,64] 1,024 B each (+ an F32 [1,1] scale, 4 B, no
// params); an int4 expert packed 8 per I32, weight_packed [64,2] = 512 B for 1,024 params, with
// a BF16 [64,1] weight_scale (128 B); shared expert BF16 [16,64] 2,048 B; router BF16 [4,64]
// 512 B; layer 2 (past the 2 decoder layers: the MTP block) eh_proj BF16 [64,128] 16,384 B;
// lm_head BF16 [32,64] 4,096 B.
SafetensorsWriter shard2() {
  SafetensorsWriter w;
  w.tensor("model.layers.1.mlp.experts.0.up_proj.weight", "F8_E4M3", {16, 64}, 1024);
  w.tensor("model.layers.1.mlp.experts.0.up_proj.weight_scale_inv", "F32", {1, 1}, 4);
  w.tensor("model.layers.1.mlp.experts.1.up_proj.weight", "F8_E4M3", {16, 64}, 1024);
  w.tensor("model.layers.1.mlp.experts.2.down_proj.weight_packed", "I32", {64, 2}, 512);
  w.tensor("model.layers.1.mlp.experts.2.down_proj.weight_scale", "BF16", {64, 1}, 128);
  w.tensor("model.layers.1.mlp.shared_experts.up_proj.weight", "BF16", {16, 64}, 2048);
  w.tensor("model.layers.1.mlp.gate.weight", "BF16", {4, 64}, 512);
  w.tensor("model.layers.2.eh_proj.weight", "BF16", {64, 128}, 16384);
  w.tensor("lm_head.weight", "BF16", {32, 64}, 4096);
  return w;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("vramcalc-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

fs::path write_model_folder(const std::string& name) {
  fs::path dir = temp_dir(name);
  write_text(dir / "config.json", kConfig);
  shard1().write(dir / "model-00001-of-00002.safetensors");
  shard2().write(dir / "model-00002-of-00002.safetensors");
  nlohmann::json index = {{"metadata", {{"total_size", 38276}}}, {"weight_map", nlohmann::json::object()}};
  for (const char* t : {"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight"}) index["weight_map"][t] = "model-00001-of-00002.safetensors";
  index["weight_map"]["lm_head.weight"] = "model-00002-of-00002.safetensors";
  write_text(dir / "model.safetensors.index.json", index.dump());
  return dir;
}

TEST(Safetensors, ReadsHeaderExactly) {
  MemorySource src(shard2().whole(), "shard2.safetensors");
  SafetensorsFile f = read_safetensors(src);
  ASSERT_EQ(f.tensors.size(), 9u);
  uint64_t bytes = 0;
  for (const auto& t : f.tensors) bytes += t.bytes();
  EXPECT_EQ(bytes, 25732u);
  // Only the 8-byte length and the JSON header were read, never the data.
  EXPECT_EQ(src.bytes_fetched(), 8 + f.header_bytes);
}

TEST(Safetensors, ClassifiesAndCountsParamsOfPackedLayouts) {
  MemorySource a(shard1().whole()), b(shard2().whole());
  std::vector<SafetensorsFile> files = {read_safetensors(a), read_safetensors(b)};
  TensorTally t = tally_safetensors(files, 2);
  EXPECT_EQ(t.bytes, 12544u + 25732u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::Embedding), 2048u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::Attention), 2048u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::DenseMlp), 2048u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::Norms), 64u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::RoutedExperts), 1024u + 1024u + 1024u);  // packed int4: 128 x 8
  EXPECT_EQ(t.params_by_class.at(ParamClass::SharedExperts), 1024u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::Router), 256u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::Mtp), 8192u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::OutputHead), 2048u);
  EXPECT_EQ(t.params, 20800u);
  EXPECT_EQ(t.by_dtype.at("F8_E4M3").bytes, 2048u);
}

TEST(Safetensors, ClassifierKnowsTheMajorFamilies) {
  EXPECT_EQ(classify_hf_tensor("model.layers.3.self_attn.kv_a_proj_with_mqa.weight"), ParamClass::Attention);
  EXPECT_EQ(classify_hf_tensor("model.layers.3.linear_attn.q_proj.weight"), ParamClass::Attention);  // Qwen3-Next GDN
  EXPECT_EQ(classify_hf_tensor("backbone.layers.0.mixer.in_proj.weight"), ParamClass::Attention);     // Nemotron-H Mamba
  EXPECT_EQ(classify_hf_tensor("model.layers.1.mlp.experts.gate_up_proj_blocks"), ParamClass::RoutedExperts);  // gpt-oss
  EXPECT_EQ(classify_hf_tensor("model.layers.1.block_sparse_moe.experts.3.w1.weight"), ParamClass::RoutedExperts);  // Mixtral
  EXPECT_EQ(classify_hf_tensor("model.layers.1.mlp.shared_expert_gate.weight"), ParamClass::SharedExperts);
  EXPECT_EQ(classify_hf_tensor("model.layers.1.mlp.router.weight"), ParamClass::Router);
  EXPECT_EQ(classify_hf_tensor("model.layers.1.mlp.gate.e_score_correction_bias"), ParamClass::Router);
  EXPECT_EQ(classify_hf_tensor("vision_tower.blocks.0.attn.qkv.weight"), ParamClass::Vision);
  EXPECT_EQ(classify_hf_tensor("model.layers.61.enorm.weight"), ParamClass::Norms);
  EXPECT_EQ(classify_hf_tensor("mtp.layers.0.mlp.up_proj.weight"), ParamClass::Mtp);
  EXPECT_EQ(tensor_layer_index("model.layers.61.enorm.weight"), 61u);
  EXPECT_EQ(classify_gguf_tensor("blk.3.ffn_gate_inp_shexp.weight"), ParamClass::SharedExperts);
  EXPECT_EQ(classify_gguf_tensor("blk.3.exp_probs_b.bias"), ParamClass::Router);
  EXPECT_EQ(classify_gguf_tensor("blk.3.ssm_conv1d.weight"), ParamClass::Attention);
}

// GPT-2 / GPT-NeoX names: wpe and embed_in are lookups, embed_out the head; the causal masks
// (h.0.attn.bias [1, 1, 8, 8] F32, 256 B; attention.bias [1, 1, 8, 8] BOOL, 64 B), masked_bias (a
// scalar, 4 B) and rotary inv_freq ([4] F32, 16 B) are buffers engines skip, in no total; a real bias
// (c_attn.bias [48] F32) is a parameter. Parameters: wte 16 x 16 + wpe 8 x 16 + c_attn.bias 48 +
// embed_in 256 + embed_out 256 = 944.
TEST(Safetensors, BuffersAreNotParametersAndLearnedPositionsAreEmbeddings) {
  SafetensorsWriter w;
  w.tensor("transformer.wte.weight", "F32", {16, 16}, 1024);
  w.tensor("transformer.wpe.weight", "F32", {8, 16}, 512);
  w.tensor("transformer.h.0.attn.bias", "F32", {1, 1, 8, 8}, 256);
  w.tensor("transformer.h.0.attn.masked_bias", "F32", {}, 4);
  w.tensor("transformer.h.0.attn.c_attn.bias", "F32", {48}, 192);
  w.tensor("gpt_neox.embed_in.weight", "F32", {16, 16}, 1024);
  w.tensor("gpt_neox.layers.0.attention.bias", "BOOL", {1, 1, 8, 8}, 64);
  w.tensor("gpt_neox.layers.0.attention.rotary_emb.inv_freq", "F32", {4}, 16);
  w.tensor("embed_out.weight", "F32", {16, 16}, 1024);
  MemorySource src(w.whole());
  TensorTally t = tally_safetensors({read_safetensors(src)}, 1);
  EXPECT_EQ(t.params, 944u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::Embedding), 256u + 128u + 256u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::OutputHead), 256u);
  EXPECT_EQ(t.params_by_class.at(ParamClass::Attention), 48u);
  EXPECT_EQ(t.buffer_tensors, 4u);
  EXPECT_EQ(t.buffer_bytes, 256u + 4u + 64u + 16u);
  EXPECT_EQ(t.bytes, 1024u + 512u + 192u + 1024u + 1024u);
}

// The folder path: geometry from config.json, weights = the exact summed tensor bytes.
// Active = 20,800 - embedding 2,048 - MTP 8,192 - half the routed 3,072 (2 of 4 used) = 9,024.
TEST(Safetensors, ModelFolderGivesMeasuredCheckpoint) {
  fs::path dir = write_model_folder("folder");
  Model m = resolve_model(dir.string());
  EXPECT_EQ(m.layers.size(), 2u);
  EXPECT_EQ(m.layer_count(AttentionKind::Latent), 1u);
  EXPECT_EQ(m.native.bytes, 38276u);
  EXPECT_TRUE(m.native.measured);
  EXPECT_EQ(m.params.derived_total, 20800u);
  EXPECT_EQ(m.params.derived_active, 9024u);
  // A single shard with the config beside it reads too; the index file itself as well.
  EXPECT_EQ(resolve_model((dir / "model-00001-of-00002.safetensors").string()).native.bytes, 12544u);
  EXPECT_EQ(resolve_model((dir / "model.safetensors.index.json").string()).native.bytes, 38276u);
  fs::remove_all(dir);
}

TEST(Safetensors, TiedHeadSavedAgainIsAStoredCopy) {
  // A tied Qwen3-style config whose files also hold lm_head.weight (as Qwen/Qwen3-0.6B's do): the
  // download has three BF16 tensors, 4,096 + 8,192 + 4,096 B; engines load the embedding once (vLLM
  // skips lm_head.* when tie_word_embeddings), so the loaded bytes are 12,288 and the copy 4,096.
  fs::path dir = temp_dir("tied");
  write_text(dir / "config.json", R"({"model_type": "qwen3", "num_hidden_layers": 1, "hidden_size": 64, "vocab_size": 32,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32, "tie_word_embeddings": true,
    "max_position_embeddings": 128, "torch_dtype": "bfloat16"})");
  SafetensorsWriter w;
  w.tensor("model.embed_tokens.weight", "BF16", {32, 64}, 4096);
  w.tensor("model.layers.0.self_attn.q_proj.weight", "BF16", {64, 64}, 8192);
  w.tensor("lm_head.weight", "BF16", {32, 64}, 4096);
  w.write(dir / "model.safetensors");
  Model m = resolve_model(dir.string());
  EXPECT_EQ(m.native.bytes, 12288u);
  EXPECT_EQ(m.native.copy_bytes, 4096u);
  EXPECT_EQ(m.native.download_bytes(), 16384u);
  EXPECT_EQ(m.params.derived_total, 2048u + 4096u);
  EXPECT_EQ(m.params.stored_copies, 2048u);
  EXPECT_EQ(m.params.by_class.count(ParamClass::OutputHead), 0u);
  // Decode still reads the (tied) head: embedding rows count as the active output head.
  EXPECT_EQ(m.params.active_by_class.at(ParamClass::OutputHead), 2048u);
  fs::remove_all(dir);
}

TEST(Safetensors, MissingShardIsNamed) {
  fs::path dir = write_model_folder("missing");
  fs::remove(dir / "model-00002-of-00002.safetensors");
  try {
    resolve_model(dir.string());
    ADD_FAILURE() << "a folder with a missing shard was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model-00002-of-00002.safetensors"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Safetensors, WithoutConfigInspectStillCounts) {
  fs::path dir = temp_dir("noconfig");
  shard1().write(dir / "model.safetensors");
  CheckpointInspection c = inspect_checkpoint((dir / "model.safetensors").string());
  EXPECT_FALSE(c.model.has_value());
  EXPECT_EQ(c.tally.bytes, 12544u);
  EXPECT_THROW(resolve_model((dir / "model.safetensors").string()), InputError);
  fs::remove_all(dir);
}

std::string with_header(const std::string& json) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return out + json;
}

TEST(Safetensors, HostileHeadersAreInputErrors) {
  auto rejects = [](const std::string& bytes) {
    MemorySource src(bytes, "bad.safetensors");
    try {
      read_safetensors(src);
      return false;
    } catch (const InputError& e) {
      return e.subject() == "bad.safetensors";
    }
  };
  EXPECT_TRUE(rejects(""));
  EXPECT_TRUE(rejects(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}"));          // length 2^63
  EXPECT_TRUE(rejects(with_header("[1]")));                                                  // not an object
  EXPECT_TRUE(rejects(with_header(std::string(100, '[') + std::string(100, ']'))));          // deep nesting
  EXPECT_TRUE(rejects(with_header(R"({"t": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 1]}})") + "x"));
  EXPECT_TRUE(rejects(with_header(R"({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})") + "1234"));  // past end
  EXPECT_TRUE(rejects(with_header(R"({"t": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})") + "12345678"));  // 12 != 8
  EXPECT_TRUE(rejects(with_header(R"({"t": {"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 8]}})") + "12345678"));
  EXPECT_TRUE(rejects(with_header(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}, "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})") + "123456"));
  EXPECT_TRUE(rejects(with_header(R"({"t": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})") + "1234"));
}

// Every truncation of a valid file, and every byte flip in its header, ends in an InputError
// (or a successful read for harmless flips), never a crash.
TEST(Safetensors, TruncatedOrCorruptFilesAreInputErrors) {
  const std::string good = shard1().whole();
  const size_t header = shard1().header_bytes().size();
  for (size_t n = 0; n < header + 10; ++n) {
    MemorySource src(good.substr(0, n), "cut.safetensors");
    EXPECT_THROW(read_safetensors(src), InputError) << n;
  }
  for (size_t i = 0; i < header; ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x41);
    MemorySource src(bad, "flip.safetensors");
    try {
      read_safetensors(src);
    } catch (const InputError&) {
    }
  }
}

TEST(Safetensors, IndexRefusesPathsOutsideTheFolder) {
  EXPECT_THROW(safetensors_index_files(R"({"weight_map": {"a": "../etc/passwd"}})", "index.json"), InputError);
  EXPECT_THROW(safetensors_index_files(R"({"weight_map": {}})", "index.json"), InputError);
  EXPECT_THROW(safetensors_index_files(R"({"nope": 1})", "index.json"), InputError);
  auto names = safetensors_index_files(R"({"weight_map": {"a": "x.safetensors", "b": "y.safetensors", "c": "x.safetensors"}})", "index.json");
  EXPECT_EQ(names, (std::vector<std::string>{"x.safetensors", "y.safetensors"}));
}

}  // namespace
}  // namespace vc

namespace vc {
namespace {

// GPTQ: qweight I32 [in/8, out] holds 8 int4 per word; scales and qzeros are side data.
// bitsandbytes nf4: a U8 weight with an absmax beside it holds 2 params per byte.
TEST(Safetensors, GptqAndBitsandbytesParams) {
  SafetensorsTensor q{"model.layers.0.mlp.up_proj.qweight", "I32", {8, 64}, 0, 2048, 512};
  EXPECT_EQ(safetensors_tensor_params(q, false), 4096u);
  SafetensorsTensor z{"model.layers.0.mlp.up_proj.qzeros", "I32", {1, 8}, 0, 32, 8};
  EXPECT_EQ(safetensors_tensor_params(z, false), 0u);
  SafetensorsTensor nf4{"model.layers.0.mlp.up_proj.weight", "U8", {2048, 1}, 0, 2048, 2048};
  EXPECT_EQ(safetensors_tensor_params(nf4, true), 4096u);
  SafetensorsTensor absmax{"model.layers.0.mlp.up_proj.weight.absmax", "F32", {64}, 0, 256, 64};
  EXPECT_EQ(safetensors_tensor_params(absmax, false), 0u);
}

}  // namespace
}  // namespace vc
