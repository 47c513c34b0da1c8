// The built CLI on checkpoint files: estimate and inspect on a tiny GGUF llama.cpp was measured on, and
// exit code 2 with the file named for a broken one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tiny_gguf.h"

namespace {

namespace fs = std::filesystem;
using vc::testing::tiny_gguf;

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun run(const std::string& args) {
  CliRun r;
  FILE* p = ::popen((std::string(VRAMCALC_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) r.out.append(buf, n);
  r.code = WEXITSTATUS(::pclose(p));
  return r;
}

// tiny-llama.gguf: 4 layers, 2 kv heads x head_dim 32 (256 / 8 heads); weights are the
// 2,868,224 tensor bytes of tests/data/llamacpp/tiny_models.json. KV cache at 32K, f16:
// 4 layers x 2 x 32 x 2 (K and V) x 2 B x 32,768 tokens = 33,554,432 B.
TEST(ReadersCli, EstimateOnAGgufFile) {
  CliRun r = run("estimate " + tiny_gguf("tiny-llama.gguf").string() + " --context 32K --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["weights"]["bytes"].get<uint64_t>(), 2868224u);
  EXPECT_EQ(j["totals"]["cache_bytes"].get<uint64_t>(), 33554432u);
  EXPECT_TRUE(j["model"]["native_checkpoint"]["measured"].get<bool>());
  CliRun text = run("estimate " + tiny_gguf("tiny-llama.gguf").string() + " --context 32K");
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("Verdict"), std::string::npos);
}

// tiny-qwen3moe.gguf: 1,907,200 tensor bytes, 1,316,480 parameters (llama.cpp's n_params).
TEST(ReadersCli, InspectJson) {
  CliRun r = run("inspect " + tiny_gguf("tiny-qwen3moe.gguf").string() + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "GGUF v3");
  EXPECT_EQ(j["tensor_bytes"].get<uint64_t>(), 1907200u);
  EXPECT_EQ(j["tensor_params"].get<uint64_t>(), 1316480u);
  EXPECT_EQ(j["metadata"]["general.architecture"], "qwen3moe");
  EXPECT_EQ(j["model"]["layer_kinds"]["full"].get<uint64_t>(), 4u);
  EXPECT_TRUE(j["by_dtype"].contains("Q8_0"));
}

TEST(ReadersCli, BrokenFileExitsTwoNamingIt) {
  fs::path cut = fs::temp_directory_path() / ("vramcalc-cut-" + std::to_string(::getpid()) + ".gguf");
  {
    std::ifstream in(tiny_gguf("tiny-llama.gguf"), std::ios::binary);
    std::string head(4000, '\0');
    in.read(head.data(), 4000);
    std::ofstream(cut, std::ios::binary) << head;
  }
  CliRun r = run("estimate " + cut.string());
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(cut.string()), std::string::npos) << r.out;
  CliRun i = run("inspect " + cut.string());
  EXPECT_EQ(i.code, 2) << i.out;
  fs::remove(cut);
}

}  // namespace
