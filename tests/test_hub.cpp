// Whole Hub repositories and what loads beside a model, against a local mock Hub
// (http_test_server.h): the API listing, GGUF builds (one split set), an mmproj. Every figure is
// worked out by hand from the tensors the test writes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "estimate/vision_tower.h"
#include "gguf_writer.h"
#include "http_test_server.h"
#include "remote_fixtures.h"
#include "server/api.h"
#include "tiny_mmproj.h"
#include "sources/companion_files.h"
#include "sources/remote/hub_builds.h"
#include "sources/remote/hub_repo.h"
#include "sources/remote/http_source.h"
#include "sources/resolver.h"

namespace vc {
namespace {

using testing::GgufWriter;
using testing::TestHttpServer;
namespace fs = std::filesystem;

TEST(HubBuilds, QuantTagFromFileNames) {
  // Names as published by llama.cpp's convert/quantize, unsloth (UD-, folders) and TheBloke (dots).
  EXPECT_EQ(gguf_quant_tag("Qwen3-8B-Q4_K_M.gguf"), "Q4_K_M");
  EXPECT_EQ(gguf_quant_tag("UD-Q4_K_XL/Qwen3-235B-UD-Q4_K_XL-00001-of-00003.gguf"), "UD-Q4_K_XL");
  EXPECT_EQ(gguf_quant_tag("tinyllama-1.1b-chat-v1.0.Q5_K_S.gguf"), "Q5_K_S");
  EXPECT_EQ(gguf_quant_tag("qwen2.5-7b-instruct-q8_0-00001-of-00002.gguf"), "Q8_0");
  EXPECT_EQ(gguf_quant_tag("gemma-3-4b-it-IQ4_XS.gguf"), "IQ4_XS");
  EXPECT_EQ(gguf_quant_tag("model-bf16.gguf"), "BF16");
  EXPECT_EQ(gguf_quant_tag("gpt-oss-20b-MXFP4.gguf"), "MXFP4");
  EXPECT_EQ(gguf_quant_tag("model.gguf"), "");
}

TEST(HubBuilds, GroupsSplitSetsAndPicksLikeLlamaCpp) {
  const std::vector<HubFile> files = {{"README.md", 10},
                                      {"M-Q8_0-00002-of-00002.gguf", 300},
                                      {"M-Q8_0-00001-of-00002.gguf", 700},
                                      {"M-Q4_K_M.gguf", 600},
                                      {"BF16/M-BF16-00001-of-00003.gguf", 2000},
                                      {"mmproj-M-F16.gguf", 50},
                                      {"mmproj-M-Q8_0.gguf", 30}};
  const HubLayout l = lay_out_hub_files(files);
  ASSERT_EQ(l.builds.size(), 3u);
  // Smallest first: Q4_K_M 600, Q8_0 700 + 300, BF16 2000 (1 of 3 parts).
  EXPECT_EQ(l.builds[0].tag, "Q4_K_M");
  EXPECT_EQ(l.builds[1].tag, "Q8_0");
  EXPECT_EQ(l.builds[1].bytes, 1000u);
  EXPECT_EQ(l.builds[1].files.front(), "M-Q8_0-00001-of-00002.gguf");
  EXPECT_TRUE(l.builds[1].complete());
  EXPECT_FALSE(l.builds[2].complete());
  ASSERT_EQ(l.mmproj.size(), 2u);
  EXPECT_EQ(pick_mmproj(l)->path, "mmproj-M-F16.gguf");
  EXPECT_EQ(pick_hub_build(l, "", "MODEL").tag, "Q4_K_M");       // no tag: Q4_K_M
  EXPECT_EQ(pick_hub_build(l, "q8_0", "MODEL").files.size(), 2u);  // tags ignore case
  try {
    pick_hub_build(l, "Q2_K", "MODEL");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("Q4_K_M, Q8_0, BF16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pick_hub_build(l, "BF16", "MODEL"), InputError);  // 1 of 3 parts listed
}

TEST(HubListing, RefusesMalformedAnswers) {
  const std::string url = "http://hub.local/api/models/o/r/revision/main?blobs=true";
  EXPECT_THROW(parse_hub_listing("[]", url), InputError);
  EXPECT_THROW(parse_hub_listing(R"({"siblings": 3})", url), InputError);
  EXPECT_THROW(parse_hub_listing(R"({"siblings": [{"rfilename": "../../etc/passwd", "size": 1}]})", url), InputError);
  EXPECT_THROW(parse_hub_listing(R"({"siblings": [{"rfilename": "/abs.gguf", "size": 1}]})", url), InputError);
  EXPECT_THROW(parse_hub_listing(R"({"siblings": [{"rfilename": "a.gguf"}]})", url), InputError);  // no size
  const HubListing ok = parse_hub_listing(R"({"sha": "abc", "siblings": [{"rfilename": "a.gguf", "size": 135, "lfs": {"size": 5000000000}}]})", url);
  ASSERT_EQ(ok.files.size(), 1u);
  EXPECT_EQ(ok.files[0].bytes, 5000000000u);  // the LFS object's size, not the pointer's
  EXPECT_EQ(ok.commit, "abc");
  HubSpec spec{"org", "repo", "refs/pr/1", "", ""};
  EXPECT_NE(hub_listing_url(spec).find("/api/models/org/repo/revision/refs%2Fpr%2F1?blobs=true"), std::string::npos);
}

// A mock Hub holding hf:org/tiny: a Q4_K_M file, a Q8_0 split set and an mmproj.
class MockHub : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vramcalc-hub-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cache");
    ::setenv("VRAMCALC_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    // 2 layers, hidden 256, 4 heads (head_dim 64), 2 kv heads, vocab 1000.
    // F16 build: token_embd 256 x 1000 x 2 B = 512,000; output_norm 1,024; per layer attn_norm
    // 1,024 + q 131,072 + k 65,536 + v 65,536 + o 131,072 = 394,240; total 1,301,504.
    write_build("Tiny-Q4_K_M.gguf", GgufWriter::F16, 0, 1);
    // Q8_0 (34 B per 32 values): token_embd 272,000; q and o 69,632; k and v 34,816; part 1 =
    // 272,000 + 1,024 + (1,024 + 69,632 + 34,816 * 2 + 69,632 = 209,920) = 482,944; part 2 = 209,920.
    write_build("Tiny-Q8_0-00001-of-00002.gguf", GgufWriter::Q8_0, 0, 2);
    write_build("Tiny-Q8_0-00002-of-00002.gguf", GgufWriter::Q8_0, 1, 2);
    write_mmproj("mmproj-Tiny-F16.gguf");
    nlohmann::json siblings = nlohmann::json::array({{{"rfilename", "README.md"}, {"size", 5}}});
    for (const char* f : {"Tiny-Q4_K_M.gguf", "Tiny-Q8_0-00001-of-00002.gguf", "Tiny-Q8_0-00002-of-00002.gguf", "mmproj-Tiny-F16.gguf"}) {
      const uint64_t size = fs::file_size(dir_ / f);
      siblings.push_back({{"rfilename", f}, {"size", size}, {"lfs", {{"size", size}, {"sha256", "0"}}}});
      server_.add(std::string("/org/tiny/resolve/main/") + f, dir_ / f);
    }
    std::ofstream(dir_ / "listing.json") << nlohmann::json{{"sha", "0123456789abcdef0123456789abcdef01234567"}, {"lastModified", "2026-11-01T00:00:00.000Z"}, {"siblings", siblings}}.dump();
    server_.add("/api/models/org/tiny/revision/main", dir_ / "listing.json");
    set_hf_endpoint(server_.root());
  }
  void TearDown() override {
    set_hf_endpoint("");
    fs::remove_all(dir_);
  }

  void write_build(const std::string& name, uint32_t type, int part, int parts) {
    GgufWriter w;
    const bool q8 = type == GgufWriter::Q8_0;
    auto bytes = [q8](uint64_t values) { return q8 ? values / 32 * 34 : values * 2; };
    if (parts > 1) {
      w.u32("split.no", static_cast<uint32_t>(part));
      w.u32("split.count", static_cast<uint32_t>(parts));
    }
    if (part == 0) {
      w.str("general.architecture", "llama");
      w.u32("llama.block_count", 2);
      w.u32("llama.embedding_length", 256);
      w.u32("llama.attention.head_count", 4);
      w.u32("llama.attention.head_count_kv", 2);
      w.u32("llama.context_length", 131072);
      w.u32("llama.vocab_size", 1000);
      w.tensor("token_embd.weight", {256, 1000}, type, bytes(256000));
      w.tensor("output_norm.weight", {256}, GgufWriter::F32, 1024);
    }
    for (int l = 0; l < 2; ++l) {
      if (parts > 1 && l != part) continue;
      const std::string b = "blk." + std::to_string(l) + ".";
      w.tensor(b + "attn_norm.weight", {256}, GgufWriter::F32, 1024);
      w.tensor(b + "attn_q.weight", {256, 256}, type, bytes(65536));
      w.tensor(b + "attn_k.weight", {256, 128}, type, bytes(32768));
      w.tensor(b + "attn_v.weight", {256, 128}, type, bytes(32768));
      w.tensor(b + "attn_output.weight", {256, 256}, type, bytes(65536));
    }
    w.write(dir_ / name);
  }

  // Gemma 3's projector geometry at a tiny width: 896 px images, 14 px patches, pooled 4 x 4.
  // tiny_mmproj.h: 116,224 B of tensors.
  void write_mmproj(const std::string& name) { vc::testing::write_tiny_mmproj(dir_ / name); }

  std::string run_cli(const std::string& args) {
    const std::string cmd = "VRAMCALC_HF_ENDPOINT=" + server_.root() + " " + std::string(VRAMCALC_BINARY) + " " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    if (!p) return out;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    status_ = WEXITSTATUS(::pclose(p));
    return out;
  }

  fs::path dir_;
  TestHttpServer server_;
  int status_ = -1;
};

constexpr uint64_t kQ4Bytes = 1301504, kQ8Bytes = 482944 + 209920, kMmprojBytes = 116224;

// The lines of device `name` in an engine answer, by label prefix: the first match's bytes (-1: none).
int64_t line_bytes(const nlohmann::json& engine, const std::string& device, const std::string& label_prefix) {
  for (const auto& d : engine["devices"]) {
    if (d["name"] != device) continue;
    for (const auto& l : d["lines"]) {
      if (l["label"].get<std::string>().rfind(label_prefix, 0) == 0) return l["bytes"].get<int64_t>();
    }
  }
  return -1;
}

TEST_F(MockHub, TagPicksTheBuildAndTheRootTakesQ4KM) {
  EXPECT_EQ(resolve_model("hf:org/tiny:q8_0").native.bytes, kQ8Bytes);  // both split parts
  EXPECT_EQ(resolve_model("hf:org/tiny:Q4_K_M").native.bytes, kQ4Bytes);
  EXPECT_EQ(resolve_model("hf:org/tiny").native.bytes, kQ4Bytes);  // llama.cpp's default tag
  try {
    resolve_model("hf:org/tiny:IQ1_S");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("builds: Q8_0, Q4_K_M"), std::string::npos) << e.what();  // smallest first
  }
}

TEST_F(MockHub, MmprojFoundBesideAndRead) {
  const std::string spec = find_mmproj_beside("hf:org/tiny:Q4_K_M", "--mmproj");
  EXPECT_EQ(spec, "hf:org/tiny@main/mmproj-Tiny-F16.gguf");
  const VisionTower t = vision_tower_from_mmproj(read_gguf_header(spec, "--mmproj"));
  EXPECT_EQ(t.weight_bytes, kMmprojBytes);
  EXPECT_EQ(t.image_tokens, 256u);  // (896 / 14)^2 / 4^2 = 4,096 / 16: Gemma 3's 256 per image
  // 4,096 positions x (5 x 64 + 128) x 4 B = 7,340,032 plus 2 heads x 4,096^2 x 4 B = 134,217,728.
  EXPECT_EQ(t.activation_bytes, 141557760u);
}

TEST_F(MockHub, CliBuildsPrintsTheLiveLadder) {
  const std::string out = run_cli("builds hf:org/tiny --json");
  ASSERT_EQ(status_, 0) << out;
  const auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["builds"].size(), 2u);
  EXPECT_EQ(j["builds"][0]["name"], "Q8_0");  // smallest first
  // A build's bytes are its files' listed sizes (headers included), summed over the split parts.
  EXPECT_EQ(j["builds"][0]["bytes"].get<uint64_t>(), fs::file_size(dir_ / "Tiny-Q8_0-00001-of-00002.gguf") + fs::file_size(dir_ / "Tiny-Q8_0-00002-of-00002.gguf"));
  EXPECT_EQ(j["builds"][0]["parts"], "2 of 2 parts");
  EXPECT_EQ(j["builds"][1]["bytes"].get<uint64_t>(), fs::file_size(dir_ / "Tiny-Q4_K_M.gguf"));
  EXPECT_EQ(j["repository"]["commit"], "0123456789abcdef0123456789abcdef01234567");
  EXPECT_FALSE(j["repository"]["read_at"].get<std::string>().empty());
  ASSERT_EQ(j["mmproj"].size(), 1u);
  // The text ladder: one row per build, smallest first, then the projector beside them.
  const std::string text = run_cli("builds hf:org/tiny");
  ASSERT_EQ(status_, 0) << text;
  const auto q8 = text.find("\nQ8_0 "), q4 = text.find("\nQ4_K_M ");
  ASSERT_NE(q8, std::string::npos) << text;
  ASSERT_NE(q4, std::string::npos) << text;
  EXPECT_LT(q8, q4);
  EXPECT_NE(text.find("2 of 2 parts"), std::string::npos) << text;
  EXPECT_NE(text.find("mmproj: mmproj-Tiny-F16.gguf"), std::string::npos) << text;
  EXPECT_NE(text.find("commit 0123456789ab"), std::string::npos) << text;
}

TEST_F(MockHub, CliEstimateWithMmprojAndImages) {
  const std::string out = run_cli("estimate hf:org/tiny:Q4_K_M --mmproj auto --images 2 --context 32K --engine llamacpp --json");
  ASSERT_EQ(status_, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["weights"]["bytes"].get<uint64_t>(), kQ4Bytes);
  // 2 layers x 2 kv heads x (64 + 64) values x 2 B = 1,024 B per token, over 32,768 + 2 x 256 tokens.
  EXPECT_EQ(j["totals"]["cache_bytes"].get<uint64_t>(), 1024u * (32768u + 512u));
  const auto& c = j["components"];
  EXPECT_EQ(c["image_tokens"].get<uint64_t>(), 512u);
  ASSERT_GE(c["lines"].size(), 3u);
  EXPECT_EQ(c["lines"][0]["id"], "vision.weights");
  EXPECT_EQ(c["lines"][0]["bytes"].get<uint64_t>(), kMmprojBytes);
  EXPECT_EQ(c["lines"][1]["id"], "vision.compute");
  EXPECT_EQ(c["lines"][1]["bytes"].get<uint64_t>(), 141557760u);
  EXPECT_GT(line_bytes(j["engine"], "CUDA0", "Compute buffer"), 0);  // llama.cpp's own lines still there
}

// Issue 17's done-when: text weights, tower, image tokens, KV and compute per device. Figures by
// hand from the files the fixture writes: the tower 116,224 B and its encoder 141,557,760 B on
// CUDA0 (llama.cpp's clip_ctx takes the first GPU backend); the text KV 1,024 B per token
// (2 layers x 2 kv heads x 128 values x 2 B) x 32,768 cells on CUDA0, which holds both layers.
TEST_F(MockHub, DoneWhenEstimateShowsComponentsPerDevice) {
  const std::string out = run_cli("estimate hf:org/tiny:Q4_K_M --mmproj auto --context 32K --engine llamacpp --json");
  ASSERT_EQ(status_, 0) << out;
  const auto j = nlohmann::json::parse(out);
  const auto& e = j["engine"];
  EXPECT_EQ(line_bytes(e, "CUDA0", "Vision tower weights"), 116224);
  EXPECT_EQ(line_bytes(e, "CUDA0", "Vision encoder compute"), 141557760);
  EXPECT_EQ(line_bytes(e, "CUDA0", "KV cache"), 1024 * 32768);
  EXPECT_GT(line_bytes(e, "CUDA0", "Compute buffer"), 0);  // the fitted rule of docs/engines.md
  // Text weights: the token embedding on the host (256 x 1,000 x 2 B), the rest on CUDA0 with a
  // copy of the embedding as the output layer (the file has no output.weight: llama.cpp loads
  // token_embd again, duplicated, for the tied head), so CUDA0 holds 789,504 + 512,000 B.
  EXPECT_EQ(line_bytes(e, "host", "Weights on host"), 512000);
  EXPECT_EQ(line_bytes(e, "CUDA0", "Weights on CUDA0"), static_cast<int64_t>(kQ4Bytes));
  EXPECT_EQ(e["settings"]["image_tokens_per_image"], 256);  // (896 / 14)^2 / 4^2
  EXPECT_EQ(e["settings"]["images"], 0);
  uint64_t devices_sum = 0;
  for (const auto& d : e["devices"]) devices_sum += d["total_bytes"].get<uint64_t>();
  EXPECT_EQ(e["total_bytes"].get<uint64_t>(), devices_sum);

  // Two images add 2 x 256 tokens: 33,280 cells (a multiple of 256, so no padding).
  const auto two = nlohmann::json::parse(run_cli("estimate hf:org/tiny:Q4_K_M --mmproj auto --images 2 --context 32K --engine llamacpp --json"));
  EXPECT_EQ(line_bytes(two["engine"], "CUDA0", "KV cache"), 1024 * 33280);
  EXPECT_EQ(two["engine"]["settings"]["image_tokens"], 512);
  EXPECT_EQ(two["engine"]["settings"]["n_ctx"], 33280);

  const std::string text = run_cli("estimate hf:org/tiny:Q4_K_M --mmproj auto --images 2 --context 32K --engine llamacpp");
  EXPECT_EQ(status_, 0) << text;
  for (const char* want : {"CUDA0", "Vision tower weights", "Vision encoder compute", "KV cache", "image_tokens=512", "Loaded beside the text model"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
}

// --no-mmproj-offload in a pasted command keeps the tower on the host.
TEST_F(MockHub, NoMmprojOffloadKeepsTheTowerOnTheHost) {
  const std::string out = run_cli("estimate hf:org/tiny:Q4_K_M --mmproj auto --engine-command \"llama-server -m tiny.gguf -c 4096 --no-mmproj-offload\" --json");
  ASSERT_EQ(status_, 0) << out;
  const auto e = nlohmann::json::parse(out)["engine"];
  EXPECT_EQ(line_bytes(e, "host", "Vision tower weights"), 116224);
  EXPECT_EQ(line_bytes(e, "CUDA0", "Vision tower weights"), -1);
}

// The draft as llama-server loads it: one sequence of the target's context per sequence (8,192 by
// default) at f16, 1,024 B per token; its Q8_0 weights split like the target's (the embedding,
// 272,000 B, on the host and again as the tied output on CUDA0); the LoRA beside the layers it
// modifies (both on CUDA0).
TEST_F(MockHub, DraftAndLoraPlacedPerDevice) {
  const std::string out = run_cli("estimate hf:org/tiny:Q4_K_M --draft hf:org/tiny:Q8_0 --lora hf:org/tiny/Tiny-Q4_K_M.gguf --engine llamacpp --json");
  ASSERT_EQ(status_, 0) << out;
  const auto e = nlohmann::json::parse(out)["engine"];
  EXPECT_EQ(line_bytes(e, "CUDA0", "Draft model: KV cache"), 1024 * 8192);
  EXPECT_EQ(line_bytes(e, "host", "Draft model: Weights on host"), 272000);
  EXPECT_EQ(line_bytes(e, "CUDA0", "Draft model: Weights on CUDA0"), static_cast<int64_t>(kQ8Bytes));
  EXPECT_GT(line_bytes(e, "CUDA0", "Draft model: Compute buffer"), 0);
  EXPECT_EQ(line_bytes(e, "CUDA0", "LoRA adapter"), static_cast<int64_t>(kQ4Bytes));
  EXPECT_EQ(e["settings"]["n_ctx_draft"], 8192);
  // One llama-server prompt cache holds both models' slot states (server_slot::prompt_save): the
  // target's 1,024 B a token x 8,192 plus the draft's as much, well under the 8,192 MiB --cache-ram.
  EXPECT_EQ(line_bytes(e, "host", "Prompt cache"), 2 * 1024 * 8192);
  EXPECT_EQ(line_bytes(e, "host", "Draft model: Prompt cache"), -1);
  // -ngld 0 keeps the draft's layers on the host.
  const auto cpu = nlohmann::json::parse(run_cli("estimate hf:org/tiny:Q4_K_M --engine-command \"llama-server -m t.gguf -ngl 99 -md hf:org/tiny:Q8_0 -ngld 0\" --json"))["engine"];
  EXPECT_EQ(line_bytes(cpu, "CUDA0", "Draft model: Weights"), -1);
  // No -c: llama.cpp's -c 0, the context the GGUF was trained with (this test's file writes
  // llama.context_length 131,072), which the draft's cache follows.
  EXPECT_EQ(line_bytes(cpu, "host", "Draft model: KV cache"), 1024 * 131072);
}

// A pasted llama.cpp command without -ts runs on every GPU of the box (llama.cpp splits the layers
// by each device's memory), and -devd / -otd place the draft: -devd CUDA1 puts all of the draft's
// offloaded layers on CUDA1 (its f16 cache, 1,024 B a token x -c 4,096, there and
// nowhere else), -devd none keeps them on the host, -otd moves the tensors it matches (all here)
// to the host; a device the box lacks exits 2 naming -devd.
TEST_F(MockHub, DraftDevicesAndOverrides) {
  auto engine = [&](const std::string& flags) {
    const std::string out = run_cli("estimate hf:org/tiny:Q4_K_M --gpu \"RTX 4090 x2\" --engine-command \"llama-server -m t.gguf -c 4096 -ngl 99 -md hf:org/tiny:Q8_0 " +
                                    flags + "\" --json");
    EXPECT_EQ(status_, 0) << out;
    return nlohmann::json::parse(out)["engine"];
  };
  const auto cuda1 = engine("-devd CUDA1");
  EXPECT_EQ(line_bytes(cuda1, "CUDA1", "Draft model: KV cache"), 1024 * 4096);
  EXPECT_EQ(line_bytes(cuda1, "CUDA0", "Draft model: KV cache"), -1);
  EXPECT_GT(line_bytes(cuda1, "CUDA1", "Weights on CUDA1"), 0);  // the target's output layer: the second GPU is used
  EXPECT_EQ(cuda1["settings"]["device_draft"], "CUDA1");
  const auto none = engine("-devd none");
  EXPECT_EQ(line_bytes(none, "host", "Draft model: KV cache"), 1024 * 4096);
  EXPECT_EQ(line_bytes(none, "CUDA0", "Draft model: Weights"), -1);
  EXPECT_EQ(line_bytes(none, "CUDA1", "Draft model: Weights"), -1);
  const auto overridden = engine("-devd CUDA1 -otd .*=CPU");
  EXPECT_EQ(line_bytes(overridden, "CUDA1", "Draft model: Weights on CUDA1"), -1);
  // every tensor on the host: the file's bytes plus the tied output's copy of the 272,000-B embedding
  EXPECT_EQ(line_bytes(overridden, "host", "Draft model: Weights on host"), static_cast<int64_t>(kQ8Bytes) + 272000);
  const std::string bad = run_cli("estimate hf:org/tiny:Q4_K_M --gpu \"RTX 4090 x2\" --engine-command \"llama-server -m t.gguf -ngl 99 -md hf:org/tiny:Q8_0 -devd CUDA2\"");
  EXPECT_EQ(status_, 2) << bad;
  EXPECT_NE(bad.find("-devd"), std::string::npos) << bad;
  const std::string bad_otd = run_cli("estimate hf:org/tiny:Q4_K_M --engine-command \"llama-server -m t.gguf -ngl 99 -md hf:org/tiny:Q8_0 -otd exps\"");
  EXPECT_EQ(status_, 2) << bad_otd;
  EXPECT_NE(bad_otd.find("-otd: 'exps' is not REGEX=BUFFER"), std::string::npos) << bad_otd;
}

TEST_F(MockHub, CliDraftAndLora) {
  // The Q8_0 build as a draft beside the Q4_K_M target, and the Q4_K_M file read as an adapter
  // (any GGUF's tensor bytes): draft KV at f16 = 1,024 B per token x 8,192 tokens.
  const std::string out = run_cli("estimate hf:org/tiny:Q4_K_M --draft hf:org/tiny:Q8_0 --lora hf:org/tiny/Tiny-Q4_K_M.gguf --json");
  ASSERT_EQ(status_, 0) << out;
  const auto j = nlohmann::json::parse(out);
  const auto& lines = j["components"]["lines"];
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["id"], "draft.weights");
  EXPECT_EQ(lines[0]["bytes"].get<uint64_t>(), kQ8Bytes);
  EXPECT_EQ(lines[1]["bytes"].get<uint64_t>(), 1024u * 8192u);
  EXPECT_EQ(lines[2]["id"], "lora.weights");
  EXPECT_EQ(lines[2]["bytes"].get<uint64_t>(), kQ4Bytes);
  // The rule (the default engine) puts them on its one device, beside the text model's lines.
  const auto& rule = j["engine"];
  EXPECT_EQ(line_bytes(rule, "all devices", "Draft model weights"), static_cast<int64_t>(kQ8Bytes));
  EXPECT_EQ(line_bytes(rule, "all devices", "Draft model cache"), 1024 * 8192);
  EXPECT_EQ(line_bytes(rule, "all devices", "LoRA adapter"), static_cast<int64_t>(kQ4Bytes));
  // vLLM's answer does not place them yet, and says so.
  const auto vllm = nlohmann::json::parse(run_cli("estimate hf:org/tiny:Q4_K_M --lora hf:org/tiny/Tiny-Q4_K_M.gguf --engine vllm --json"));
  ASSERT_EQ(status_, 0);
  EXPECT_NE(vllm["engine"]["notes"].dump().find("not placed per device yet"), std::string::npos);
}

TEST_F(MockHub, BadExtrasAreInputErrors) {
  run_cli("estimate hf:org/tiny:Q4_K_M --images 2");
  EXPECT_EQ(status_, 2);  // images need a projector
  run_cli("estimate hf:org/tiny:Q4_K_M --mmproj auto --images lots");
  EXPECT_EQ(status_, 2);
  run_cli("estimate hf:org/tiny:Q4_K_M --mmproj hf:org/tiny/Tiny-Q4_K_M.gguf");
  EXPECT_EQ(status_, 2);  // a model file is not a projector
}

// /api/estimate takes the same mmproj, images, draft and lora as the CLI, read from the Hub through
// the server's guarded reads, and answers the CLI's document (compared with the binary's output).
TEST_F(MockHub, ApiEstimateExtrasAreTheCliDocument) {
  auto api = [](const std::vector<std::pair<std::string, std::string>>& params) { return server::call_api("estimate", server::RequestParams::from_pairs(params)); };
  const auto a = api({{"source", "hf:org/tiny:Q4_K_M"}, {"mmproj", "auto"}, {"images", "2"}, {"context", "32K"}, {"engine", "llamacpp"}});
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(nlohmann::json::parse(a.body), nlohmann::json::parse(run_cli("estimate hf:org/tiny:Q4_K_M --mmproj auto --images 2 --context 32K --engine llamacpp --json")));
  EXPECT_EQ(nlohmann::json::parse(a.body)["components"]["lines"][0]["bytes"], kMmprojBytes);
  const auto b = api({{"model", "qwen3-8b"}, {"mmproj", "hf:org/tiny/mmproj-Tiny-F16.gguf"}, {"draft", "hf:org/tiny:Q8_0"},
                      {"lora", "hf:org/tiny/Tiny-Q4_K_M.gguf,hf:org/tiny/Tiny-Q4_K_M.gguf"}, {"engine", "llamacpp"}});
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(nlohmann::json::parse(b.body),
            nlohmann::json::parse(run_cli("estimate qwen3-8b --mmproj hf:org/tiny/mmproj-Tiny-F16.gguf --draft hf:org/tiny:Q8_0 "
                                          "--lora hf:org/tiny/Tiny-Q4_K_M.gguf --lora hf:org/tiny/Tiny-Q4_K_M.gguf --engine llamacpp --json")));
  // A file that was read but is no projector: refused on mmproj without repeating what was read.
  const auto c = api({{"model", "qwen3-8b"}, {"mmproj", "hf:org/tiny/Tiny-Q4_K_M.gguf"}});
  EXPECT_EQ(c.status, 400);
  EXPECT_EQ(nlohmann::json::parse(c.body)["error"]["field"], "mmproj");
  EXPECT_NE(c.body.find("withholds"), std::string::npos) << c.body;
  // A file the Hub does not hold: the transfer's failure, in our words, on the parameter.
  const auto d = api({{"model", "qwen3-8b"}, {"lora", "hf:org/tiny/missing.gguf"}});
  EXPECT_EQ(d.status, 400);
  EXPECT_EQ(nlohmann::json::parse(d.body)["error"]["field"], "lora") << d.body;
}

// The listing goes through the same request path as range reads (issue 14's rules): the token
// goes to the Hub endpoint only and never across a redirect to another host.
TEST_F(MockHub, ListingTokenStaysWithTheHub) {
  TestHttpServer cdn;
  cdn.add("/api/listing.json", dir_ / "listing.json");
  const std::string cdn_port = cdn.root().substr(cdn.root().rfind(':') + 1);
  server_.add_redirect("/api/models/org/moved/revision/main", "http://localhost:" + cdn_port + "/api/listing.json");
  ::setenv("HF_TOKEN", "hf_secret", 1);
  const HubListing l = list_hub_repository(HubSpec{"org", "moved", "main", "", ""}, "MODEL");
  ::unsetenv("HF_TOKEN");
  EXPECT_EQ(l.files.size(), 5u);  // README.md, the Q4_K_M file, two Q8_0 parts, the mmproj
  EXPECT_EQ(server_.last_authorization(), "Bearer hf_secret");
  EXPECT_GT(cdn.requests(), 0u);
  EXPECT_EQ(cdn.last_authorization(), "");
}

// Under the server's policies the listing is refused on a loopback address before any request,
// and counts against the request's byte budget.
TEST_F(MockHub, ListingUnderTheServersPolicies) {
  {
    FetchScope scope(FetchPolicy{std::string(), true, UINT64_MAX});
    EXPECT_THROW((void)list_hub_repository(HubSpec{"org", "tiny", "main", "", ""}, "MODEL"), RemoteError);
    EXPECT_EQ(server_.requests(), 0u);
  }
  FetchScope scope(FetchPolicy{std::string(), false, 100});  // the listing is over 100 bytes
  try {
    (void)list_hub_repository(HubSpec{"org", "tiny", "main", "", ""}, "MODEL");
    ADD_FAILURE();
  } catch (const RemoteError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 100 bytes"), std::string::npos) << e.what();
  }
}

// A listing at a commit id never changes: a second process reads it from the range cache, whose
// entries are the owner's alone and checked on every read (an edited entry is not trusted). With
// a token the listing is not stored (a private repository's file list stays with its token).
TEST_F(MockHub, CommitListingCachedWithTheRangeCacheProtections) {
  const std::string sha = "0123456789abcdef0123456789abcdef01234567", sha2 = "89abcdef0123456789abcdef0123456789abcdef";
  for (const std::string& rev : {sha, sha2}) {
    server_.add("/api/models/org/tiny/revision/" + rev, dir_ / "listing.json");
    for (const char* f : {"Tiny-Q4_K_M.gguf", "Tiny-Q8_0-00001-of-00002.gguf", "Tiny-Q8_0-00002-of-00002.gguf", "mmproj-Tiny-F16.gguf"}) {
      server_.add("/org/tiny/resolve/" + rev + "/" + f, dir_ / f);
    }
  }
  const std::string out = run_cli("builds hf:org/tiny@" + sha + " --json");
  ASSERT_EQ(status_, 0) << out;
  // From now on the Hub no longer answers this listing: only the cache can.
  server_.add_redirect("/api/models/org/tiny/revision/" + sha, server_.url("/gone"));
  const std::string again = run_cli("builds hf:org/tiny@" + sha + " --json");
  EXPECT_EQ(status_, 0) << again;
  std::size_t listing_entries = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "cache")) {
    EXPECT_EQ(fs::status(e.path()).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    if (fs::file_size(e.path()) != 24 + fs::file_size(dir_ / "listing.json")) continue;  // 24: the entry's own head
    ++listing_entries;
    vc::testing::flip_last_byte(e.path());
  }
  EXPECT_EQ(listing_entries, 1u);
  run_cli("builds hf:org/tiny@" + sha + " --json");
  EXPECT_EQ(status_, 2) << "an edited cache entry was trusted";
  ::setenv("HF_TOKEN", "hf_secret", 1);
  run_cli("builds hf:org/tiny@" + sha2 + " --json");
  ::unsetenv("HF_TOKEN");
  EXPECT_EQ(status_, 0);
  server_.add_redirect("/api/models/org/tiny/revision/" + sha2, server_.url("/gone"));
  run_cli("builds hf:org/tiny@" + sha2 + " --json");
  EXPECT_EQ(status_, 2) << "a listing read with a token was stored";
}

// A directory of its own for one test, with the download cache inside it.
fs::path fresh_cache_dir(const std::string& prefix) {
  const fs::path dir = fs::temp_directory_path() / (prefix + std::to_string(::getpid()));
  fs::create_directories(dir / "cache");
  ::setenv("VRAMCALC_CACHE_DIR", (dir / "cache").c_str(), 1);
  return dir;
}

// The keys a one-layer llama header starts with; each test adds its vocabulary and tensors.
GgufWriter one_layer_llama_header() {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.u32("llama.block_count", 1);
  w.u32("llama.embedding_length", 64);
  w.u32("llama.attention.head_count", 1);
  return w;
}

// A 10 MB header (a 600,000-string vocabulary) over HTTP. The first range (1 MiB, the Range probe
// too) holds the array's count and its first 58,000 strings; 18 bytes each (8 for the length, 10
// for "token_0123") project the rest, fetched in one more range: 2 requests, where doubling ranges
// after a 1-byte probe took 1 + 4 and 1 MiB chunks 11. The issue's bound, ceil(log2(header / first
// range)) + 1 = ceil(log2(10.3)) + 1 = 5, and its target, two requests up to 16 MiB, both hold.
TEST(RemoteSpeed, LargeHeaderInTwoRequests) {
  const fs::path dir = fresh_cache_dir("vramcalc-speed-");
  GgufWriter w = one_layer_llama_header();
  w.u32("llama.vocab_size", 600000);
  w.str_array("tokenizer.ggml.tokens", std::vector<std::string>(600000, "token_0123"));
  w.tensor("token_embd.weight", {64, 600000}, GgufWriter::F16, 76800000);
  w.tensor("blk.0.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.write(dir / "vocab.gguf");
  const uint64_t header = w.header().size();
  ASSERT_GT(header, 10000000u);
  TestHttpServer server;
  server.add("/vocab.gguf", dir / "vocab.gguf");
  const GgufFile f = read_gguf_header(server.url("/vocab.gguf"), "MODEL");
  EXPECT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(server.requests(), 2u);
  EXPECT_LT(server.bytes_served(), 2 * header);
  // Read again: one 1-byte request confirms the ETag; the ranges come from the cache.
  const uint64_t before = server.bytes_served();
  EXPECT_EQ(read_gguf_header(server.url("/vocab.gguf"), "MODEL").tensors.size(), 2u);
  EXPECT_EQ(server.requests(), 3u);
  EXPECT_EQ(server.bytes_served() - before, 1u);
  fs::remove_all(dir);
}

// A BPE vocabulary laid out as llama.cpp writes it: tokenizer.ggml.model "gpt2", 150,000 tokens,
// their i32 types, then 300,000 merges ("token_0123 token_0123", 21 bytes): 2.7 + 0.6 + 8.7 MB,
// a 12 MB header. The merges' count is not known when the second range is sized (the first range
// ends inside the tokens); two merges a token, each two tokens and a space, cover it: 2 requests.
TEST(RemoteSpeed, BpeMergesAreProjectedFromTheTokens) {
  const fs::path dir = fresh_cache_dir("vramcalc-bpe-");
  GgufWriter w = one_layer_llama_header();
  w.str("tokenizer.ggml.model", "gpt2");
  w.str_array("tokenizer.ggml.tokens", std::vector<std::string>(150000, "token_0123"));
  w.i32_array("tokenizer.ggml.token_type", std::vector<int32_t>(150000, 1));
  w.str_array("tokenizer.ggml.merges", std::vector<std::string>(300000, "token_0123 token_0123"));
  w.tensor("token_embd.weight", {64, 150000}, GgufWriter::F16, 19200000);
  w.tensor("blk.0.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.write(dir / "bpe.gguf");
  const uint64_t header = w.header().size();
  ASSERT_GT(header, 12000000u);
  TestHttpServer server;
  server.add("/bpe.gguf", dir / "bpe.gguf");
  EXPECT_EQ(read_gguf_header(server.url("/bpe.gguf"), "MODEL").tensors.size(), 2u);
  EXPECT_EQ(server.requests(), 2u);
  EXPECT_LT(server.bytes_served(), 2 * header);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace vc
