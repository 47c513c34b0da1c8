// Remote reads: a local HTTP server (http_test_server.h) serves a multi-shard safetensors model
// and a 2 GiB sparse GGUF; vramcalc reads their headers with Range requests, caches them, and
// refuses servers that ignore Range instead of downloading whole files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "gguf_writer.h"
#include "http_test_server.h"
#include "safetensors_writer.h"
#include "sources/checkpoint.h"
#include "sources/remote/http_source.h"
#include "sources/remote/location.h"
#include "sources/safetensors/safetensors_file.h"
#include "sources/safetensors/safetensors_set.h"
#include "sources/concurrent_reads.h"
#include "sources/resolver.h"

namespace vc {
namespace {

using testing::GgufWriter;
using testing::SafetensorsWriter;
using testing::TestHttpServer;
namespace fs = std::filesystem;

class Remote : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vramcalc-remote-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cache");
    ::setenv("VRAMCALC_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 1 decoder layer, hidden 4096, 32 heads (head_dim 128), 8 kv heads, vocab 262,144; the
  // embedding alone is 4096 * 262,144 * 2 B = 2 GiB. Bytes: token_embd 2,147,483,648 +
  // output_norm 16,384 + attn_norm 16,384 + attn_q [4096,4096] F16 33,554,432 + attn_k and
  // attn_v [4096,1024] F16 8,388,608 each + attn_output 33,554,432 = 2,231,402,496.
  fs::path write_big_gguf() {
    GgufWriter w;
    w.str("general.architecture", "llama");
    w.u32("llama.block_count", 1);
    w.u32("llama.embedding_length", 4096);
    w.u32("llama.attention.head_count", 32);
    w.u32("llama.attention.head_count_kv", 8);
    w.u32("llama.context_length", 131072);
    w.u32("llama.vocab_size", 262144);
    w.tensor("token_embd.weight", {4096, 262144}, GgufWriter::F16, 2147483648ull);
    w.tensor("output_norm.weight", {4096}, GgufWriter::F32, 16384);
    w.tensor("blk.0.attn_norm.weight", {4096}, GgufWriter::F32, 16384);
    w.tensor("blk.0.attn_q.weight", {4096, 4096}, GgufWriter::F16, 33554432);
    w.tensor("blk.0.attn_k.weight", {4096, 1024}, GgufWriter::F16, 8388608);
    w.tensor("blk.0.attn_v.weight", {4096, 1024}, GgufWriter::F16, 8388608);
    w.tensor("blk.0.attn_output.weight", {4096, 4096}, GgufWriter::F16, 33554432);
    fs::path p = dir_ / "big.gguf";
    w.write(p);
    return p;
  }

  fs::path dir_;
};

constexpr uint64_t kBigWeights = 2231402496ull;

TEST_F(Remote, BigSparseGgufReadsHeadersOnly) {
  fs::path file = write_big_gguf();
  const uint64_t size = fs::file_size(file);
  ASSERT_GT(size, kBigWeights);
  TestHttpServer server;
  server.add("/models/big.gguf", file);
  Model m = resolve_model(server.url("/models/big.gguf"));
  EXPECT_EQ(m.native.bytes, kBigWeights);
  EXPECT_TRUE(m.native.measured);
  EXPECT_EQ(m.layers.size(), 1u);
  EXPECT_EQ(m.layers[0].attention.kv_heads, 8u);
  EXPECT_EQ(m.layers[0].attention.head_dim_k, 128u);
  EXPECT_GT(server.bytes_served(), 0u);
  EXPECT_LT(server.bytes_served(), size / 100) << "more than 1% of the file was fetched";

  // A second read comes from the disk cache: only the 1-byte probe goes over the network.
  const uint64_t before = server.bytes_served();
  EXPECT_EQ(resolve_model(server.url("/models/big.gguf")).native.bytes, kBigWeights);
  EXPECT_LE(server.bytes_served() - before, 1u);
}

// Redirects are followed (the Hub answers LFS files with a 302 to a CDN) and HF_TOKEN is sent.
TEST_F(Remote, FollowsRedirectsAndSendsToken) {
  fs::path file = write_big_gguf();
  TestHttpServer server;
  server.add("/cdn/big.gguf", file);
  server.add_redirect("/org/repo/resolve/main/big.gguf", "/cdn/big.gguf");
  ::setenv("HF_TOKEN", "hf_test_token", 1);
  set_hf_endpoint(server.root());
  Model m = resolve_model("hf:org/repo/big.gguf");
  set_hf_endpoint("");
  ::unsetenv("HF_TOKEN");
  EXPECT_EQ(m.native.bytes, kBigWeights);
  EXPECT_EQ(server.last_authorization(), "Bearer hf_test_token");
}

TEST_F(Remote, ServerIgnoringRangeIsRefusedNotDownloaded) {
  fs::path file = write_big_gguf();
  TestHttpServer server;
  server.add("/big.gguf", file);
  server.ignore_range(true);
  try {
    resolve_model(server.url("/big.gguf"));
    ADD_FAILURE() << "a server without Range support was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Range"), std::string::npos) << e.what();
    EXPECT_EQ(e.subject(), server.url("/big.gguf"));
  }
  EXPECT_LT(server.bytes_served(), uint64_t{64} << 20);  // the transfer was cut, not completed
}

TEST_F(Remote, NotFoundIsAnInputErrorNamingTheUrl) {
  TestHttpServer server;
  try {
    resolve_model(server.url("/nothing/here.gguf"));
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("404"), std::string::npos) << e.what();
  }
}

// hf:ORG/REPO against a local endpoint: index -> two shards + config.json, all by Range.
TEST_F(Remote, HubRepositoryWithShardedSafetensors) {
  const char* config = R"({"model_type": "kimi_linear", "num_hidden_layers": 1, "hidden_size": 64, "vocab_size": 32,
    "num_attention_heads": 4, "kv_lora_rank": 16, "qk_rope_head_dim": 8, "qk_nope_head_dim": 8, "v_head_dim": 8,
    "linear_attn_config": {"num_heads": 2, "head_dim": 8, "full_attn_layers": [1]},
    "num_experts": 4, "num_experts_per_token": 2, "moe_intermediate_size": 16, "intermediate_size": 32})";
  // Shard 1: embed_tokens BF16 [32,64] = 4,096 B; shard 2: lm_head BF16 [32,64] = 4,096 B and a
  // 64 MiB BF16 [32768,1024] tensor (layer 0 up_proj: 33,554,432 params) that must never be fetched.
  SafetensorsWriter a, b;
  a.tensor("model.embed_tokens.weight", "BF16", {32, 64}, 4096);
  b.tensor("lm_head.weight", "BF16", {32, 64}, 4096);
  b.tensor("model.layers.0.mlp.up_proj.weight", "BF16", {32768, 1024}, 67108864);
  a.write(dir_ / "s1.safetensors");
  b.write(dir_ / "s2.safetensors");
  std::ofstream(dir_ / "config.json") << config;
  nlohmann::json index = {{"weight_map", {{"model.embed_tokens.weight", "model-00001-of-00002.safetensors"},
                                          {"lm_head.weight", "model-00002-of-00002.safetensors"}}}};
  std::ofstream(dir_ / "index.json") << index.dump();

  TestHttpServer server;
  const std::string repo = "/acme/tiny/resolve/main/";
  server.add(repo + "config.json", dir_ / "config.json");
  server.add(repo + "model.safetensors.index.json", dir_ / "index.json");
  server.add(repo + "model-00001-of-00002.safetensors", dir_ / "s1.safetensors");
  server.add(repo + "model-00002-of-00002.safetensors", dir_ / "s2.safetensors");
  set_hf_endpoint(server.root());
  Model m = resolve_model("hf:acme/tiny");
  set_hf_endpoint("");
  EXPECT_EQ(m.native.bytes, 4096u + 4096u + 67108864u);
  EXPECT_TRUE(m.native.measured);
  EXPECT_EQ(m.params.derived_total, 2048u + 2048u + 33554432u);
  EXPECT_EQ(m.name, "tiny");
  // Headers, index and config only: under 1% of the 64 MiB the files hold.
  EXPECT_GT(server.requests(), 4u);
  EXPECT_LT(server.bytes_served(), (4096u + 4096u + 67108864u) / 100);
}

// A safetensors file declares its header's length in its first 8 bytes. Read over HTTP, the first
// range (64 KiB, the Range probe too) holds a small header whole: one request. A 2,000-tensor header
// (about 150 KB) takes exactly one more range, of the length it declares.
TEST_F(Remote, SafetensorsHeaderInAtMostTwoRequests) {
  SafetensorsWriter small, large;
  small.tensor("model.embed_tokens.weight", "BF16", {32, 64}, 4096);
  for (int i = 0; i < 2000; ++i) large.tensor("model.layers." + std::to_string(i) + ".mlp.up_proj.weight", "BF16", {32, 64}, 4096);
  small.write(dir_ / "small.safetensors");
  large.write(dir_ / "large.safetensors");
  ASSERT_GT(large.header_bytes().size(), uint64_t{64} << 10);
  TestHttpServer server;
  server.add("/small.safetensors", dir_ / "small.safetensors");
  server.add("/large.safetensors", dir_ / "large.safetensors");
  EXPECT_EQ(read_safetensors(*open_http_source(server.url("/small.safetensors"))).tensors.size(), 1u);
  EXPECT_EQ(server.requests(), 1u);
  EXPECT_EQ(read_safetensors(*open_http_source(server.url("/large.safetensors"))).tensors.size(), 2000u);
  EXPECT_EQ(server.requests(), 1u + 2u);
  EXPECT_LT(server.bytes_served(), (uint64_t{64} << 10) + 2 * large.header_bytes().size());
}

// The shards of a set are read several at once (8 at most) under the caller's one byte budget; the
// set keeps its order, and a missing shard is reported as the first one missing in set order.
TEST_F(Remote, ShardsAreReadConcurrentlyUnderOneBudget) {
  TestHttpServer server;
  server.delay(std::chrono::milliseconds(50));  // a round trip, so that reads overlap
  std::vector<std::string> urls;
  uint64_t total = 0;
  for (int i = 1; i <= 6; ++i) {
    SafetensorsWriter w;
    w.tensor("shard" + std::to_string(i), "BF16", {2, 2}, 8);
    const fs::path p = dir_ / ("s" + std::to_string(i) + ".safetensors");
    w.write(p);
    total += fs::file_size(p);
    server.add("/s" + std::to_string(i), p);
    urls.push_back(server.url("/s" + std::to_string(i)));
  }
  ::setenv("VRAMCALC_CACHE_MAX", "0", 1);  // every read cold, so each charges what it fetches
  const Opener open = [](const std::string& u) { return open_http_source(u); };
  const SafetensorsSet set = read_safetensors_set(urls, open, kConcurrentRemoteReads);
  ASSERT_EQ(set.files.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(set.files[i].tensors.at(0).name, "shard" + std::to_string(i + 1));
  EXPECT_GT(server.max_in_flight(), 1u);
  // Each file is smaller than the first range (64 KiB): its whole size is what the budget is charged.
  {
    FetchScope scope(FetchPolicy{std::nullopt, false, total - 1});
    try {
      read_safetensors_set(urls, open, kConcurrentRemoteReads);
      ADD_FAILURE() << "six shards were read on a budget one byte short of them";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("may read at most " + std::to_string(total - 1) + " bytes"), std::string::npos) << e.what();
    }
  }
  {
    FetchScope scope(FetchPolicy{std::nullopt, false, total});
    EXPECT_EQ(read_safetensors_set(urls, open, kConcurrentRemoteReads).files.size(), 6u);
  }
  std::vector<std::string> gaps = urls;
  gaps[2] = server.url("/missing-3");
  gaps[4] = server.url("/missing-5");
  try {
    read_safetensors_set(gaps, open, kConcurrentRemoteReads);
    ADD_FAILURE() << "a set with missing shards was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("shard 3 of 6"), std::string::npos) << e.what();
  }
  ::unsetenv("VRAMCALC_CACHE_MAX");
}

TEST(HubSpec, ResolvesAgainstTheEndpoint) {
  set_hf_endpoint("http://hub.local:8080/");
  bool root = false;
  std::string repo;
  EXPECT_EQ(hf_url("hf:Qwen/Qwen3-8B", "MODEL", root, &repo), "http://hub.local:8080/Qwen/Qwen3-8B/resolve/main");
  EXPECT_TRUE(root);
  EXPECT_EQ(repo, "Qwen3-8B");
  EXPECT_EQ(hf_url("hf:org/repo@v1.0/sub/model-Q4_K_M.gguf", "MODEL", root), "http://hub.local:8080/org/repo/resolve/v1.0/sub/model-Q4_K_M.gguf");
  EXPECT_FALSE(root);
  EXPECT_THROW(hf_url("hf:org", "MODEL", root), InputError);
  EXPECT_THROW(hf_url("hf:org/repo/../../etc", "MODEL", root), InputError);
  set_hf_endpoint("");
}

// The CLI end to end: `vramcalc estimate URL --context 32K --json` reports the exact weights.
TEST_F(Remote, CliEstimatesARemoteGguf) {
  fs::path file = write_big_gguf();
  TestHttpServer server;
  server.add("/big.gguf", file);
  const std::string cmd = std::string(VRAMCALC_BINARY) + " estimate " + server.url("/big.gguf") + " --context 32K --json 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = ::pclose(p);
  ASSERT_EQ(WEXITSTATUS(status), 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["weights"]["bytes"].get<uint64_t>(), kBigWeights);
  // 1 layer x 8 kv heads x (128 + 128) values x 2 B x 32,768 tokens = 134,217,728 B of KV cache.
  EXPECT_EQ(j["totals"]["cache_bytes"].get<uint64_t>(), 134217728u);
}

}  // namespace
}  // namespace vc
