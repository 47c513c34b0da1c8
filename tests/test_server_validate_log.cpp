// /api/validate-log: a pasted engine start-up log beside our figures, the very document
// `vramcalc validate --log FILE --json` prints, for a catalogue model only. The logs are public
// ones stored in tests/data/engine-logs.json (each case names its source).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.h"
#include "core/error.h"
#include "server/api.h"
#include "server/request_params.h"

using nlohmann::json;
using vc::server::call_api;
using vc::server::RequestParams;

namespace {

std::string raw_log(const std::string& id) {
  std::ifstream in(std::string(VRAMCALC_TEST_DATA_DIR) + "/engine-logs.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const json doc = json::parse(ss.str());
  for (const auto& c : doc["cases"]) {
    if (c["id"] != id) continue;
    std::string text;
    for (const auto& line : c["raw"]) text += line.get<std::string>() + "\n";
    return text;
  }
  ADD_FAILURE() << "no case " << id;
  return "";
}

vc::server::ApiAnswer validate_log(const std::vector<std::pair<std::string, std::string>>& pairs) {
  return call_api("validate-log", RequestParams::from_pairs(pairs));
}

std::string field_of(const vc::server::ApiAnswer& a) { return json::parse(a.body)["error"]["field"].get<std::string>(); }

// llm-d-planner's vLLM 0.19 log of Llama 3.1 8B names its model as the Hub repository, which the
// catalogue knows; the answer is the CLI's document for the same text.
TEST(ServerValidateLog, AnswersWhatTheCliPrints) {
  const std::string text = raw_log("vllm-llama31-8b-h100-tp1-mml8192");
  const auto a = validate_log({{"log", text}});
  ASSERT_EQ(a.status, 200) << a.body;
  const json j = json::parse(a.body);
  EXPECT_EQ(j["schema"], "vramcalc.validate-log/1");
  EXPECT_EQ(j["engine"], "vllm");
  EXPECT_EQ(j["model"], "llama-3.1-8b");
  ASSERT_FALSE(j["rows"].empty());
  for (const auto& r : j["rows"]) EXPECT_TRUE(r["computed"].get<bool>()) << r.dump();
  const std::string path = ::testing::TempDir() + "vllm-llama31-8b.log";
  {
    std::ofstream out(path);
    out << text;
  }
  const CliResult cli = run_cli("validate --log " + path + " --json");
  std::remove(path.c_str());
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_EQ(json::parse(cli.output), j);
}

TEST(ServerValidateLog, TheModelIsACatalogueEntry) {
  // SGLang's "KV Cache is allocated" line names no model (vLLM issue 21348's Qwen3-235B-A22B-FP8).
  const std::string text = raw_log("sglang-21348-qwen3-235b-a22b-fp8-4xh100");
  auto a = validate_log({{"log", text}});
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(field_of(a), "model");
  a = validate_log({{"log", text}, {"model", "qwen3-235b-a22b"}, {"gpu-memory", "79.2GiB"}});  // the log prints no card either
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(json::parse(a.body)["engine"], "sglang");
  // Never a file or an address: a path or URL as the model is refused before anything is read.
  for (const char* hostile : {"/etc/passwd", "hf:org/repo", "http://127.0.0.1/config.json"}) {
    a = validate_log({{"log", text}, {"model", hostile}});
    EXPECT_EQ(a.status, 400) << hostile;
    EXPECT_EQ(field_of(a), "model");
  }
}

TEST(ServerValidateLog, BadRequestsNameTheirField) {
  const std::string text = raw_log("vllm-llama31-8b-h100-tp1-mml8192");
  auto a = validate_log({});
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(field_of(a), "log");
  a = validate_log({{"log", "hello world"}});  // not a log of a known engine
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(field_of(a), "log");
  // 60 KiB a pasted log may take (the server's body is 64 KiB), 1,024 bytes any other value.
  EXPECT_NO_THROW(RequestParams::from_pairs({{"log", std::string(60 * 1024, 'x')}}));
  EXPECT_THROW(RequestParams::from_pairs({{"log", std::string(60 * 1024 + 1, 'x')}}), vc::InputError);
  EXPECT_THROW(RequestParams::from_pairs({{"model", std::string(1025, 'x')}}), vc::InputError);
  a = validate_log({{"log", text}, {"gpu-memory", "lots"}});
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(field_of(a), "gpu-memory");
  a = validate_log({{"log", text}, {"context", "8K"}});  // not a parameter of this route
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(field_of(a), "context");
}

}  // namespace
