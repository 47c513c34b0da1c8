// Full-size geometry that the CUDA buffer rules were never fitted on: llama.cpp 80fb11ac built with
// CUDA on one NVIDIA H200 (tests/data/llamacpp-h200-runtime.json, measured by
// tools/measure-llamacpp/gpu-run.sh's runtime stage: llama_get_memory_breakdown() per buffer type)
// with Llama 3.1 8B's geometry (meta-llama/Llama-3.1-8B config.json: 32 layers, hidden 4096, 32
// query and 8 KV heads of 128, FFN 14336, 128,256-token vocabulary) at uniform Q4_K with a Q6_K
// output head, every layer on the GPU. The KV cache, the CUDA0 compute buffer and the pinned host
// compute buffer must come out to the byte, flash attention on and off, at three micro-batches.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

#include "engines/llamacpp_cuda_buffers.h"
#include "engines/llamacpp_placement.h"
#include "engines/llamacpp_profile.h"
#include "gguf_writer.h"
#include "sources/gguf/gguf_file.h"
#include "sources/gguf/gguf_model.h"
#include "sources/io/byte_source.h"
#include "test_data.h"

using namespace vc;
using vc::testing::GgufWriter;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t kEmbd = 4096, kFfn = 14336, kVocab = 128256, kKvWidth = 8 * 128;

// Q4_K: 144 B per 256 values; Q6_K: 210 B per 256 (ggml's block sizes).
uint64_t q4k(uint64_t values) { return values / 256 * 144; }
uint64_t q6k(uint64_t values) { return values / 256 * 210; }

// The header speed-models.mjs writes for 'llama-8b-q4k' (the data is a hole: zeros, as measured).
Model llama_8b_q4k() {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.u32("llama.vocab_size", kVocab);
  w.u32("llama.context_length", 131072);
  w.u32("llama.embedding_length", kEmbd);
  w.u32("llama.block_count", 32);
  w.u32("llama.feed_forward_length", kFfn);
  w.u32("llama.attention.head_count", 32);
  w.u32("llama.attention.head_count_kv", 8);
  w.u32("llama.rope.dimension_count", 128);
  w.f32("llama.rope.freq_base", 500000.0f);
  w.f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.str("tokenizer.ggml.model", "llama");
  w.str_array("tokenizer.ggml.tokens", std::vector<std::string>(kVocab, "t"));
  w.tensor("token_embd.weight", {kEmbd, kVocab}, GgufWriter::Q4_K, q4k(kEmbd * kVocab));
  w.tensor("output_norm.weight", {kEmbd}, GgufWriter::F32, kEmbd * 4);
  w.tensor("output.weight", {kEmbd, kVocab}, GgufWriter::Q6_K, q6k(kEmbd * kVocab));
  for (int il = 0; il < 32; ++il) {
    const std::string b = "blk." + std::to_string(il) + ".";
    w.tensor(b + "attn_norm.weight", {kEmbd}, GgufWriter::F32, kEmbd * 4);
    w.tensor(b + "attn_q.weight", {kEmbd, kEmbd}, GgufWriter::Q4_K, q4k(kEmbd * kEmbd));
    w.tensor(b + "attn_k.weight", {kEmbd, kKvWidth}, GgufWriter::Q4_K, q4k(kEmbd * kKvWidth));
    w.tensor(b + "attn_v.weight", {kEmbd, kKvWidth}, GgufWriter::Q4_K, q4k(kEmbd * kKvWidth));
    w.tensor(b + "attn_output.weight", {kEmbd, kEmbd}, GgufWriter::Q4_K, q4k(kEmbd * kEmbd));
    w.tensor(b + "ffn_norm.weight", {kEmbd}, GgufWriter::F32, kEmbd * 4);
    w.tensor(b + "ffn_gate.weight", {kEmbd, kFfn}, GgufWriter::Q4_K, q4k(kEmbd * kFfn));
    w.tensor(b + "ffn_up.weight", {kEmbd, kFfn}, GgufWriter::Q4_K, q4k(kEmbd * kFfn));
    w.tensor(b + "ffn_down.weight", {kFfn, kEmbd}, GgufWriter::Q4_K, q4k(kFfn * kEmbd));
  }
  const fs::path file = fs::temp_directory_path() / ("vramcalc-llama8b-" + std::to_string(::getpid()) + ".gguf");
  w.write(file);  // sparse: 4.66 GB of holes
  auto src = open_file_source(file.string());
  Model m = model_from_gguf({read_gguf(*src)});
  fs::remove(file);
  return m;
}

}  // namespace

TEST(LlamaCppCudaFullSize, Llama8BBuffersMatchTheH200Runs) {
  const Model model = llama_8b_q4k();
  LlamaCppPlacementSettings all_layers;
  all_layers.n_gpu_layers = 999;
  int checked = 0;
  const auto runs = vc::testing::read_test_json("llamacpp-h200-runtime.json");
  for (const auto& c : runs.at("cases")) {
    if (c.at("model") != "llama-8b-q4k") continue;
    LlamaCppSettings s;
    s.n_ctx = c.at("n_ctx").get<uint64_t>();
    s.n_seq = c.at("n_seq_max").get<uint64_t>();
    s.n_ubatch = c.at("n_ubatch").get<uint64_t>();
    s.flash_attn = c.at("flash_attn").get<int>() == 1;
    const LlamaCppBuffers ours = llamacpp_cuda_buffers(model, s, all_layers);
    const auto& measured = c.at("buffers");
    const std::string id = c.at("id");
    EXPECT_EQ(ours.at("CUDA0").context, measured.at("CUDA0").at("context").get<uint64_t>()) << id;
    EXPECT_EQ(ours.at("CUDA0").compute, measured.at("CUDA0").at("compute").get<uint64_t>()) << id;
    EXPECT_EQ(ours.at("CUDA_Host").compute, measured.at("CUDA_Host").at("compute").get<uint64_t>()) << id;
    ++checked;
  }
  // -c 4096 and 32768; -ub 128, 512, 2048; -fa off; -np 4 at -c 16384.
  EXPECT_EQ(checked, 6);
}
