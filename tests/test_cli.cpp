// End-to-end: the CLI's exit codes, messages and JSON, run as a user would.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace {

void expect_bad_input(const std::string& args, const std::string& names, const std::string& accepted) {
  CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(names), std::string::npos) << "message should name " << names << ": " << r.output;
  EXPECT_NE(r.output.find(accepted), std::string::npos) << "message should list what is accepted: " << r.output;
}

}  // namespace

TEST(Cli, BadFlagsExitTwoNamingTheFlag) {
  expect_bad_input("estimate kimi-k3 --context -5", "--context", "accepted");
  expect_bad_input("estimate kimi-k3 --context 12Q", "--context", "32K = 32,768");
  expect_bad_input("estimate kimi-k3 --quant XYZ", "--quant", "Q4_K_M");
  expect_bad_input("estimate kimi-k3 --cache-dtype int3", "--cache-dtype", "Q8_0");
  expect_bad_input("estimate kimi-k3 --overhead lots", "--overhead", "accepted");
  expect_bad_input("estimate kimi-k3 --seqs 0", "--seqs", "accepted");
  expect_bad_input("estimate kimi-k3 --state-dtype f8", "--state-dtype", "mixed");
  expect_bad_input("estimate no-such-model", "MODEL", "kimi-k3.1-pro");
  expect_bad_input("estimate kimi-k3 --no-such-flag", "--no-such-flag", "--help");
  expect_bad_input("stream kimi-k3 --bpw -1", "--bpw", "accepted");
}

TEST(Cli, EstimateJsonCarriesIntegerBytesAndExplanations) {
  CliResult r = run_cli("estimate kimi-k3 --context 1M --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["schema"], "vramcalc.estimate/2");
  EXPECT_TRUE(j["totals"]["total_bytes"].is_number_unsigned());
  // 24 layers x 576 values x 2 B x 1,048,576 tokens (seed-arithmetic.md)
  EXPECT_EQ(j["totals"]["cache_bytes"].get<uint64_t>(), 28'991'029'248ull);
  EXPECT_EQ(j["inputs"]["context_tokens"].get<uint64_t>(), 1048576u);
  for (const auto& line : j["lines"]) {
    EXPECT_TRUE(line["bytes"].is_number_unsigned());
    EXPECT_FALSE(line["formula"].get<std::string>().empty()) << line["id"];
    EXPECT_FALSE(line["assumption"].get<std::string>().empty()) << line["id"];
    EXPECT_FALSE(line["source"].get<std::string>().empty()) << line["id"];
  }
}

TEST(Cli, ExplainShowsFormulaAndAssumption) {
  CliResult r = run_cli("estimate kimi-k3.1-pro --context 1M --explain");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(512 latent + 64 rope + 128 index keys) values"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("assumes:"), std::string::npos);
  EXPECT_NE(r.output.find("Treat this as a multi-node model."), std::string::npos);
}

TEST(Cli, SweepCompareBuildsStreamModels) {
  CliResult sweep = run_cli("sweep kimi-k3.1-pro --contexts 1M,32K --latent-values 1024 --state-dtype mixed --overhead 10%");
  EXPECT_EQ(sweep.exit_code, 0) << sweep.output;
  EXPECT_NE(sweep.output.find("54.92 GB"), std::string::npos) << "seed 000's 55 GB saving: " << sweep.output;
  CliResult cmp = run_cli("compare kimi-k3 kimi-k3.1-pro --context 32K");
  EXPECT_EQ(cmp.exit_code, 0) << cmp.output;
  // K3.1 Pro's 128 index keys: 24 x 128 x 2 B x 32,768 = 0.20 GB of cache, plus 15% overhead.
  EXPECT_NE(cmp.output.find("B exceeds A by 0.23 GB"), std::string::npos) << cmp.output;
  CliResult builds = run_cli("builds kimi-k3");
  EXPECT_EQ(builds.exit_code, 0);
  EXPECT_NE(builds.output.find("683 GB"), std::string::npos) << builds.output;
  CliResult stream = run_cli("stream kimi-k3 --bpw 1.7 --gbps 5,19");
  EXPECT_EQ(stream.exit_code, 0);
  EXPECT_NE(stream.output.find("0.23 tok/s"), std::string::npos) << stream.output;
  EXPECT_NE(stream.output.find("0.86 tok/s"), std::string::npos) << stream.output;
  CliResult models = run_cli("models");
  EXPECT_EQ(models.exit_code, 0);
  EXPECT_NE(models.output.find("kimi-k3.1-pro"), std::string::npos);
}

TEST(Cli, PastedLlamaCppCommandSetsTheScenario) {
  // -c 32768 -np 4 -> 8,192 cells per sequence, 4 sequences, q8_0 K and V: 32 layers x 2 rows of
  // 8 x 128 values at 34 B per 32 = 1,088 B per row -> 69,632 B/token x 32,768 cells = 2,281,701,376 B.
  CliResult r = run_cli("estimate llama-3.1-8b --json --engine-command \"llama-server -m x.gguf -c 32768 -np 4 -ctk q8_0 -ctv q8_0 -fa on\"");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["inputs"]["context_tokens"].get<uint64_t>(), 8192u);
  EXPECT_EQ(j["inputs"]["sequences"].get<uint64_t>(), 4u);
  EXPECT_EQ(j["totals"]["cache_bytes"].get<uint64_t>(), 2'281'701'376ull);
  EXPECT_EQ(j["engine"]["name"], "llamacpp");
  CliResult bad = run_cli("estimate llama-3.1-8b --engine-command \"llama-server -c lots\"");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("-c"), std::string::npos) << bad.output;
}
