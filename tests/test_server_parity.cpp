// API JSON equals CLI JSON (issue 12, item 4): every verb's parameters are its CLI flags, defined
// once (ScenarioInputs, BoxInputs, EngineInputs, ExtrasInputs fields), so the same names and values
// give the same document from /api/VERB and from `vramcalc VERB ... --json`, with every engine.
// Each case runs through call_api and through the built binary (values passed as --NAME 'VALUE').
// The expected document is the CLI's own output, not a copy: a case fails when the faces drift.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "core/error.h"
#include "plan/box_inputs.h"
#include "server/api.h"
#include "server/request_params.h"

using nlohmann::json;
using vc::server::call_api;
using vc::server::RequestParams;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

// `positional` names the parameter the CLI takes as its argument (MODEL), "" for none.
std::string cli_args(const std::string& verb, const Params& params, const std::string& positional) {
  std::string args = verb;
  for (const auto& [name, value] : params) {
    if (name == positional) args = verb + " '" + value + "'" + args.substr(verb.size());
  }
  for (const auto& [name, value] : params) {
    if (name != positional) args += " --" + name + " '" + value + "'";
  }
  return args + " --json";
}

void expect_same_document(const std::string& verb, const Params& params, const std::string& positional = "model") {
  const auto api = call_api(verb, RequestParams::from_pairs(params));
  ASSERT_EQ(api.status, 200) << api.body;
  const std::string args = cli_args(verb, params, positional);
  const CliResult cli = run_cli(args);
  ASSERT_EQ(cli.exit_code, 0) << args << "\n" << cli.output;
  EXPECT_EQ(json::parse(api.body), json::parse(cli.output)) << args;
}

// A refusal names the parameter, says what is accepted, and is the CLI's refusal of the flag.
void expect_same_refusal(const std::string& verb, const Params& params, const std::string& field, const std::string& accepted,
                         const std::string& positional = "model") {
  const auto api = call_api(verb, RequestParams::from_pairs(params));
  EXPECT_EQ(api.status, 400) << api.body;
  const json j = json::parse(api.body);
  EXPECT_EQ(j["error"]["field"], field) << api.body;
  const std::string message = j["error"]["message"];
  EXPECT_NE(message.find(accepted), std::string::npos) << message;
  const CliResult cli = run_cli(cli_args(verb, params, positional));
  EXPECT_EQ(cli.exit_code, 2) << cli.output;
  EXPECT_NE(cli.output.find(message), std::string::npos) << "CLI: " << cli.output << "\nAPI: " << message;
}

const char* const kEngines[] = {"rule", "llamacpp", "vllm", "sglang"};

}  // namespace

// Every flag `plan` and `check` take is an API parameter of /api/plan and /api/check.
TEST(ApiParity, EveryBoxFlagIsAPlanAndCheckParameter) {
  for (const std::string verb : {"plan", "check"}) {
    for (const auto& f : vc::BoxInputs::fields()) {
      Params p = {{f.name, "?"}};
      if (verb == "plan") p.push_back({"model", "qwen3-8b"});
      const auto a = call_api(verb, RequestParams::from_pairs(p));
      // "?" is no valid value of any flag: the refusal must be about the value, not an unknown name.
      EXPECT_EQ(a.status, 400) << verb << " " << f.name << " " << a.body;
      EXPECT_EQ(json::parse(a.body)["error"]["message"].get<std::string>().find("is not a parameter of this route"), std::string::npos)
          << verb << " " << f.name << " " << a.body;
    }
  }
}

// The plan of a dense and a MoE model on one GPU with each engine: the same document both ways.
TEST(ApiParity, PlanWithEveryEngine) {
  for (const char* engine : kEngines) {
    expect_same_document("plan", {{"model", "qwen3-32b"}, {"gpu", "RTX 4090"}, {"quant", "Q4_K_M"}, {"context", "8K"}, {"engine", engine}});
    expect_same_document("plan", {{"model", "qwen3-30b-a3b"}, {"gpu", "RTX 3090"}, {"ram", "64GB"}, {"quant", "Q4_K_M"}, {"engine", engine},
                                  {"experts-per-token", "4"}, {"sockets", "2"}});
  }
}

// Issue 18's flags through the API: --n-cpu-moe, a pasted llama.cpp command (its -ot placement),
// --experts-per-token, --sockets. Each changes the answer (checked against the plan without it).
TEST(ApiParity, PlanTakesTheSpeedFlags) {
  const Params base = {{"model", "qwen3-30b-a3b"}, {"gpu", "RTX 3090"}, {"ram", "64GB"}, {"quant", "Q4_K_M"}, {"engine", "llamacpp"}};
  const json plain = json::parse(call_api("plan", RequestParams::from_pairs(base)).body);
  auto with = [&](Params extra) {
    Params p = base;
    p.insert(p.end(), extra.begin(), extra.end());
    expect_same_document("plan", p);
    return json::parse(call_api("plan", RequestParams::from_pairs(p)).body);
  };
  const json moe = with({{"n-cpu-moe", "40"}});
  EXPECT_NE(moe["decode"], plain["decode"]);  // 40 layers' experts read from RAM
  const json pasted = with({{"engine-command", "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -c 8192 -ngl 99 -ot exps=CPU"}});
  EXPECT_NE(pasted["decode"], plain["decode"]);
  const json fewer = with({{"experts-per-token", "2"}});  // the config's 8 active experts -> 2
  EXPECT_NE(fewer["decode"], plain["decode"]);
  // CPU only: a second socket adds RAM bandwidth (data/speed_efficiency.json: 40% of one socket's).
  const json one = with({{"engine-command", "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 0"}});
  const json two = with({{"engine-command", "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 0"}, {"sockets", "2"}});
  EXPECT_GT(two["decode"]["expected_tok_s"].get<double>(), one["decode"]["expected_tok_s"].get<double>());
  // --numa isolate keeps llama.cpp's threads on one node (common/arg.cpp): one socket's bandwidth,
  // the one-socket figure, and the assumption says why.
  const json isolated = with({{"engine-command", "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 0 --numa isolate"}, {"sockets", "2"}});
  EXPECT_EQ(isolated["decode"]["expected_tok_s"], one["decode"]["expected_tok_s"]);
  EXPECT_NE(isolated["decode"]["assumption"].get<std::string>().find("--numa isolate"), std::string::npos) << isolated["decode"];
  const json spread = with({{"engine-command", "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 0 --numa distribute"}, {"sockets", "2"}});
  EXPECT_EQ(spread["decode"]["expected_tok_s"], two["decode"]["expected_tok_s"]);
  // --threads (or the command's -t) costs llama.cpp's CPU from its threads (docs/performance.md,
  // "llama.cpp's CPU from its threads"): both ways give one figure, not the one without threads.
  const json flag = with({{"engine-command", "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 0"}, {"threads", "12"}});
  const json command = with({{"engine-command", "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 0 -t 12"}});
  EXPECT_EQ(flag["decode"]["expected_tok_s"], command["decode"]["expected_tok_s"]);
  EXPECT_NE(flag["decode"]["expected_tok_s"], one["decode"]["expected_tok_s"]);
  for (const json& t : {flag, command}) EXPECT_NE(t["decode"]["assumption"].get<std::string>().find("12 CPU threads"), std::string::npos) << t["decode"];
}

TEST(ApiParity, CheckWithEveryEngineAndTheSpeedFlags) {
  for (const char* engine : kEngines) expect_same_document("check", {{"gpu", "RTX 4090"}, {"ram", "64GB"}, {"engine", engine}}, "");
  expect_same_document("check", {{"gpu", "RTX 3090"}, {"ram", "128GB"}, {"n-cpu-moe", "20"}, {"sockets", "2"}, {"experts-per-token", "4"}}, "");
}

// Unified memory (issue 17): the GPU's share, default or raised with gpu-wired-limit, and its
// refusals are the same both ways (an M3 Max 64GB: 48 GiB by default, 56 GiB raised).
TEST(ApiParity, UnifiedMemoryShare) {
  for (const char* limit : {"default", "56GiB"}) {
    expect_same_document("plan", {{"model", "qwen3-32b"}, {"gpu", "m3-max-64gb"}, {"quant", "Q8_0"}, {"gpu-wired-limit", limit}});
    expect_same_document("check", {{"gpu", "m3-max-64gb"}, {"gpu-wired-limit", limit}}, "");
    expect_same_document("estimate", {{"model", "qwen3-32b"}, {"gpu", "m3-max-64gb"}, {"quant", "Q8_0"}, {"engine", "llamacpp"}, {"gpu-wired-limit", limit}});
  }
  const json plan = json::parse(call_api("plan", RequestParams::from_pairs({{"model", "qwen3-32b"}, {"gpu", "m3-max-64gb"}, {"quant", "Q8_0"}})).body);
  EXPECT_EQ(plan["gpu_shares"][0]["gpu_bytes"], 51'539'607'552u);  // 3/4 of 68,719,476,736
  expect_same_refusal("plan", {{"model", "qwen3-32b"}, {"gpu", "m3-max-64gb"}, {"gpu-wired-limit", "lots"}}, "gpu-wired-limit", "accepted: a size such as 56GiB");
  expect_same_refusal("plan", {{"model", "qwen3-32b"}, {"gpu", "m3-max-64gb"}, {"gpu-wired-limit", "80GiB"}}, "gpu-wired-limit", "can be given to the GPU");
}

TEST(ApiParity, EstimateWithEveryEngine) {
  for (const char* engine : kEngines) {
    expect_same_document("estimate", {{"model", "gemma-3-27b"}, {"context", "32K"}, {"engine", engine}, {"gpu", "RTX 4090"}});
  }
  expect_same_document("estimate", {{"model", "qwen3-32b"}, {"engine-command", "llama-server -m Qwen3-32B-Q4_K_M.gguf -c 8192 -ngl 999 -fa on"}});
  expect_same_document("estimate", {{"model", "llama-3.1-70b"}, {"engine-command", "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 2"},
                                    {"gpu", "H100-sxm x2"}});
}

// A catalogue model as the draft (issue 17): weights and cache beside the target, both faces alike.
TEST(ApiParity, EstimateTakesACatalogueDraft) {
  for (const char* engine : {"rule", "llamacpp"}) {
    expect_same_document("estimate", {{"model", "qwen3-32b"}, {"quant", "Q4_K_M"}, {"draft", "qwen3-0.6b"}, {"engine", engine}});
  }
  const json j = json::parse(call_api("estimate", RequestParams::from_pairs({{"model", "qwen3-32b"}, {"draft", "qwen3-0.6b"}})).body);
  ASSERT_TRUE(j.contains("components"));
  EXPECT_EQ(j["components"]["lines"][0]["id"], "draft.weights");
}

// Bad values of the new parameters: 400 naming the parameter with what is accepted, worded as the
// CLI words its refusal of the flag.
TEST(ApiParity, BadSpeedFlagsAreTheCliRefusals) {
  const Params plan = {{"model", "qwen3-30b-a3b"}, {"gpu", "RTX 3090"}};
  auto p = [&](std::string name, std::string value) {
    Params q = plan;
    q.push_back({std::move(name), std::move(value)});
    return q;
  };
  expect_same_refusal("plan", p("n-cpu-moe", "lots"), "n-cpu-moe", "4096");
  expect_same_refusal("plan", p("n-cpu-moe", "99999"), "n-cpu-moe", "4096");
  expect_same_refusal("plan", p("experts-per-token", "0"), "experts-per-token", "1024");
  expect_same_refusal("plan", p("sockets", "9"), "sockets", "8");
  expect_same_refusal("plan", p("threads", "0"), "threads", "4096");
  expect_same_refusal("plan", p("expert-skew", "0.8"), "expert-skew", "--hot-cache on");
  expect_same_refusal("plan", p("engine-command", "ollama run qwen3"), "engine-command", "llama-server");
  // A vLLM command is planned (docs/plan.md); one whose TP needs more GPUs than the box has is refused.
  expect_same_refusal("plan", p("engine-command", "vllm serve Qwen/Qwen3-30B-A3B -tp 2"), "engine-command", "TP 2 x PP 1 = 2 ranks");
  Params vllm_moe = p("n-cpu-moe", "4");
  vllm_moe.push_back({"engine", "vllm"});
  expect_same_refusal("plan", vllm_moe, "n-cpu-moe", "--engine llamacpp");
  expect_same_refusal("check", {{"gpu", "RTX 3090"}, {"sockets", "0"}}, "sockets", "8", "");
  expect_same_refusal("estimate", {{"model", "qwen3-8b"}, {"images", "lots"}}, "images", "10,000");
  // The server takes fewer draft forms than the CLI (no paths), so its refusal says which.
  const auto a = call_api("estimate", RequestParams::from_pairs({{"model", "qwen3-8b"}, {"draft", "no-such-model"}}));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(json::parse(a.body)["error"]["field"], "draft");
  EXPECT_NE(a.body.find("or a catalogue id"), std::string::npos) << a.body;
}

// A pasted command may be as long as the CLI takes one (8,192 bytes), longer than other values.
TEST(ApiParity, EngineCommandIsBoundedAsInTheCli) {
  const std::string padding(7000, 'x');
  const std::string command = "llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -ngl 99 --alias " + padding;
  const auto a = call_api("plan", RequestParams::from_pairs({{"model", "qwen3-30b-a3b"}, {"gpu", "RTX 3090"}, {"engine-command", command}}));
  EXPECT_EQ(a.status, 200) << a.body.substr(0, 300);
  EXPECT_THROW(RequestParams::from_pairs({{"engine-command", std::string(8193, 'x')}}), vc::InputError);
  EXPECT_THROW(RequestParams::from_pairs({{"gpu", std::string(1025, 'x')}}), vc::InputError);  // other values: 1,024
}

// The server never reads a file a client names (docs/security.md): mmproj, draft and lora take
// http(s):// URLs and hf: specs (draft also a catalogue id), never a local path, whether given as a
// parameter or inside a pasted engine-command (-mm, -md, --lora).
TEST(ApiParity, EstimateRefusesLocalCompanionFiles) {
  const std::vector<std::string> paths = {"/etc/passwd", "../../etc/passwd", "file:///etc/passwd", "~/mmproj.gguf", "mmproj.gguf", "/dev/zero"};
  for (const auto& path : paths) {
    for (const std::string field : {"mmproj", "draft", "lora"}) {
      const auto a = call_api("estimate", RequestParams::from_pairs({{"model", "gemma-3-27b"}, {field, path}}));
      EXPECT_EQ(a.status, 400) << field << "=" << path << " " << a.body;
      const json j = json::parse(a.body);
      EXPECT_EQ(j["error"]["field"], field);
      EXPECT_NE(j["error"]["message"].get<std::string>().find("the server reads no local paths"), std::string::npos) << a.body;
      EXPECT_NE(j["error"]["message"].get<std::string>().find("hf:ORG/REPO"), std::string::npos) << a.body;
    }
  }
  const std::vector<std::pair<std::string, std::string>> pasted = {
      {"mmproj", "llama-server -m m.gguf -mm /etc/passwd"}, {"draft", "llama-server -m m.gguf -md /etc/passwd"}, {"lora", "llama-server -m m.gguf --lora /etc/passwd"}};
  for (const auto& [field, command] : pasted) {
    const auto a = call_api("estimate", RequestParams::from_pairs({{"model", "gemma-3-27b"}, {"engine-command", command}}));
    EXPECT_EQ(a.status, 400) << command << " " << a.body;
    EXPECT_EQ(json::parse(a.body)["error"]["field"], field) << a.body;
  }
  // auto takes a catalogue model's tower from its config (the CLI's answer); a model without one is refused.
  expect_same_document("estimate", {{"model", "gemma-3-27b"}, {"quant", "Q4_K_M"}, {"mmproj", "auto"}, {"images", "2"}, {"engine", "llamacpp"}});
  const auto a = call_api("estimate", RequestParams::from_pairs({{"model", "qwen3-8b"}, {"mmproj", "auto"}}));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(json::parse(a.body)["error"]["field"], "mmproj");
  EXPECT_NE(json::parse(a.body)["error"]["message"].get<std::string>().find("no vision tower"), std::string::npos) << a.body;
  // vLLM's LoRA slots from max-loras / max-lora-rank, as the CLI's flags.
  expect_same_document("estimate", {{"model", "qwen3-8b"}, {"engine", "vllm"}, {"gpu", "RTX 4090"}, {"max-loras", "4"}, {"max-lora-rank", "32"}});
  // More adapters than the CLI takes at once.
  std::string many;
  for (int i = 0; i < 17; ++i) many += (i ? "," : "") + std::string("hf:org/lora") + std::to_string(i);
  const auto b = call_api("estimate", RequestParams::from_pairs({{"model", "gemma-3-27b"}, {"lora", many}}));
  EXPECT_EQ(b.status, 400);
  EXPECT_EQ(json::parse(b.body)["error"]["field"], "lora");
}
