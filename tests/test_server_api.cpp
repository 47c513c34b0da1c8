// The API layer without HTTP: every route, its parameters, and each kind of bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/engine.h"
#include "estimate/estimate.h"
#include "report/json_report.h"
#include "server/api.h"
#include "server/request_params.h"

using nlohmann::json;
using vc::server::call_api;
using vc::server::RequestParams;

namespace {

json ok(std::string_view verb, const std::vector<std::pair<std::string, std::string>>& pairs) {
  auto a = call_api(verb, RequestParams::from_pairs(pairs));
  EXPECT_EQ(a.status, 200) << a.body;
  return json::parse(a.body);
}

// Expects a 4xx answer naming `field`.
void bad_params(std::string_view verb, const RequestParams& p, const std::string& field, int status = 400) {
  auto a = call_api(verb, p);
  EXPECT_EQ(a.status, status) << a.body;
  json j = json::parse(a.body);
  EXPECT_EQ(j["error"]["field"], field) << a.body;
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
}

void bad(std::string_view verb, const std::vector<std::pair<std::string, std::string>>& pairs, const std::string& field) {
  bad_params(verb, RequestParams::from_pairs(pairs), field);
}

}  // namespace

// Kimi K3 at 8K, worked by hand from config.json and facts.json:
//   weights  1,560,936,091,448 B (measured MXFP4 files)
//   cache    24 MLA layers x (512 latent + 64 rope) x 2 B x 8,192 tokens = 226,492,416 B
//   state    69 KDA layers x (1,572,864 + 110,592) values x 4 B          = 464,633,856 B
//   overhead 15% of their sum, rounded                                    = 234,244,082,658 B
//   total                                                                 = 1,795,871,300,378 B
TEST(ServerApi, EstimateGivesTheHandWorkedKimiK3Figures) {
  json j = ok("estimate", {{"model", "kimi-k3"}});
  EXPECT_EQ(j["totals"]["weights_bytes"], 1560936091448ull);
  EXPECT_EQ(j["totals"]["cache_bytes"], 226492416ull);
  EXPECT_EQ(j["totals"]["state_bytes"], 464633856ull);
  EXPECT_EQ(j["totals"]["overhead_bytes"], 234244082658ull);
  EXPECT_EQ(j["totals"]["total_bytes"], 1795871300378ull);
  EXPECT_FALSE(j.contains("display"));  // only on request (units=gb|gib)
}

TEST(ServerApi, EstimateIsTheCliJsonDocument) {
  const vc::Model* m = vc::Catalogue::builtin().find("kimi-k3.1-pro");
  ASSERT_NE(m, nullptr);
  vc::Scenario s;
  s.context = 32768;
  s.cache_dtype = "q8_0";
  // The CLI's document: the estimate and the engine's answer (the rule, by default) from one request.
  const vc::EngineRequest r = vc::engine_request(*m, s, vc::EngineInputs{}, vc::ScenarioGiven{true, false, true});
  json expected = vc::estimate_json(vc::estimate(*m, r.scenario), vc::run_engine(r));
  EXPECT_EQ(ok("estimate", {{"model", "kimi-k3.1-pro"}, {"context", "32K"}, {"cache-dtype", "q8_0"}}), expected);
}

// Q8_0 is 34 B per 32-value block = 8.5 bits: the derived 2,779,929,154,144 params x 8.5 / 8 =
// 2,953,674,726,278 B (the page's 2.8T gave 2,975 GB), which the clamp rule brings down to the
// native 1,560,936,091,448 B (seed 002).
TEST(ServerApi, EstimateReportsTheClampWithDisplayStrings) {
  json j = ok("estimate", {{"model", "kimi-k3"}, {"quant", "Q8_0"}, {"units", "gb"}});
  EXPECT_TRUE(j["weights"]["clamped"]);
  EXPECT_EQ(j["weights"]["unclamped_bytes"], 2953674726278ull);
  EXPECT_EQ(j["weights"]["bytes"], 1560936091448ull);
  EXPECT_EQ(j["display"]["total"], "1,795.87 GB");
  EXPECT_EQ(j["display"]["clamp_note"], "Q8_0 would need 2,953.67 GB for the weights, more than the native MXFP4 checkpoint; the native size stands.");
  EXPECT_EQ(j["display"]["lines"].size(), j["lines"].size());
}

TEST(ServerApi, PostBodyTakesTheSameNames) {
  auto a = call_api("estimate", RequestParams::from_json_body(R"({"model": "kimi-k3", "context": 8192, "seqs": 1, "overhead": "15%"})"));
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(json::parse(a.body)["totals"]["total_bytes"], 1795871300378ull);
}

// Sweep rows: 8K then 32K; the cache grows by 24 x 1,152 B x (32,768 - 8,192) = 679,477,248 B and
// the overhead by 15% of that (101,921,587.2 -> rounded per row), so the saving is negative.
TEST(ServerApi, SweepListsOneRowPerContext) {
  json j = ok("sweep", {{"model", "kimi-k3"}, {"contexts", "8K,32K"}});
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["inputs"]["context_tokens"], 8192);
  EXPECT_EQ(j["rows"][1]["inputs"]["context_tokens"], 32768);
  EXPECT_EQ(j["rows"][1]["totals"]["cache_bytes"].get<uint64_t>() - j["rows"][0]["totals"]["cache_bytes"].get<uint64_t>(), 679477248ull);
  EXPECT_LT(j["rows"][1]["saving_vs_previous_bytes"].get<int64_t>(), 0);
}

// A visitor's own model as the text of its config.json: Llama 3.1 8B's published values
// (meta-llama/Llama-3.1-8B config.json). Its KV cache at 8K is worked by hand:
// 32 layers x 8 kv heads x (128 K + 128 V) values x 2 B x 8,192 tokens = 1,073,741,824 B,
// the same as the catalogue entry's.
TEST(ServerApi, EstimateTakesAPastedConfig) {
  const std::string config = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";
  auto a = call_api("estimate", RequestParams::from_json_body(json{{"config", config}, {"context", "8K"}}.dump()));
  ASSERT_EQ(a.status, 200) << a.body;
  const json j = json::parse(a.body);
  EXPECT_EQ(j["totals"]["cache_bytes"], 1073741824ull);
  EXPECT_EQ(j["totals"]["cache_bytes"], ok("estimate", {{"model", "llama-3.1-8b"}})["totals"]["cache_bytes"]);
  const json ins = json::parse(call_api("inspect", RequestParams::from_pairs({{"config", config}})).body);
  EXPECT_EQ(ins["kind"], "config.json");
  EXPECT_EQ(ins["model"]["layers"], 32);
  bad("estimate", {{"config", "{not json"}}, "config");
  bad("estimate", {{"model", "kimi-k3"}, {"config", config}}, "model");
  bad("estimate", {{"source", "/etc/passwd"}}, "source");  // never a local path
}

TEST(ServerApi, CompareTakesBSideFlags) {
  json j = ok("compare", {{"a", "kimi-k3"}, {"b-context", "32K"}, {"units", "gb"}});
  EXPECT_EQ(j["a"]["model"]["id"], "kimi-k3");
  EXPECT_EQ(j["b"]["model"]["id"], "kimi-k3");
  EXPECT_EQ(j["a"]["inputs"]["context_tokens"], 8192);
  EXPECT_EQ(j["b"]["inputs"]["context_tokens"], 32768);
  EXPECT_EQ(j["difference_bytes"].get<int64_t>(),
            j["b"]["totals"]["total_bytes"].get<int64_t>() - j["a"]["totals"]["total_bytes"].get<int64_t>());
  EXPECT_EQ(j["difference_display"].get<std::string>().rfind("B exceeds A by ", 0), 0u);
}

TEST(ServerApi, ModelsListsTheCatalogue) {
  json j = ok("models", {});
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j.size(), vc::Catalogue::builtin().models().size());
  EXPECT_EQ(j[0]["id"], vc::Catalogue::builtin().models()[0].id);
}

// Seed 002's ladder: UD-IQ1_S 594 GB + 15% = 683.1 GB, so 6 x 128 GB unified.
TEST(ServerApi, BuildsGiveTheSeedLadder) {
  json j = ok("builds", {{"model", "kimi-k3"}});
  bool found = false;
  for (const auto& b : j["builds"]) {
    if (b["name"] != "UD-IQ1_S") continue;
    found = true;
    EXPECT_EQ(b["with_overhead_bytes"], 683100000000ull);
    EXPECT_EQ(b["cards"][0]["cards"], 6);
  }
  EXPECT_TRUE(found);
}

// Seed 002: 104B active x 1.7 bits / 8 = 22.1 GB per token; with the derived 104,186,931,808
// active: 22,139,723,009 B; 5 GB/s -> 0.226 tok/s (printed 0.23, as the page).
TEST(ServerApi, StreamGivesTheSeedArithmetic) {
  json j = ok("stream", {{"model", "kimi-k3"}, {"bpw", "1.7"}, {"gbps", "5,19"}});
  EXPECT_EQ(j["bytes_per_token"], 22139723009ull);
  ASSERT_EQ(j["rates"].size(), 2u);
  EXPECT_NEAR(j["rates"][0]["tokens_per_s"].get<double>(), 5e9 / 22139723009.0, 1e-9);
}

TEST(ServerApi, EveryRouteIsReachableByItsVerb) {
  std::vector<std::string> verbs;
  for (const auto& r : vc::server::api_routes()) verbs.push_back(r.verb);
  EXPECT_EQ(verbs, (std::vector<std::string>{"estimate", "sweep", "compare", "models", "builds", "stream", "plan", "check", "devices", "inspect", "validate-log"}));
}

TEST(ServerApi, BadRequestsNameTheField) {
  bad("estimate", std::vector<std::pair<std::string, std::string>>{}, "model");                                                // missing
  bad("estimate", {{"model", "no-such-model"}}, "model");                        // unknown model
  bad("estimate", {{"model", "/etc/passwd"}}, "model");                          // never a file path
  bad("estimate", {{"model", "kimi-k3"}, {"context", "lots"}}, "context");       // not a number
  bad("estimate", {{"model", "kimi-k3"}, {"context", "99999999999999"}}, "context");  // absurd
  bad("estimate", {{"model", "kimi-k3"}, {"seqs", "0"}}, "seqs");
  bad("estimate", {{"model", "kimi-k3"}, {"seqs", "-3"}}, "seqs");
  bad("estimate", {{"model", "kimi-k3"}, {"quant", "Q9_Z"}}, "quant");           // the library's "--quant" becomes "quant"
  bad("estimate", {{"model", "kimi-k3"}, {"cache-dtype", "f7"}}, "cache-dtype");
  bad("estimate", {{"model", "kimi-k3"}, {"overhead", "lots%"}}, "overhead");
  bad("estimate", {{"model", "kimi-k3"}, {"units", "furlongs"}}, "units");
  bad("estimate", {{"model", "kimi-k3"}, {"colour", "red"}}, "colour");          // unknown parameter
  bad("models", {{"model", "kimi-k3"}}, "model");                                // models takes none
  bad("sweep", {{"model", "kimi-k3"}, {"contexts", std::string(200, ',')}}, "contexts");  // over 64 values
  bad("compare", {{"b", "kimi-k3"}}, "a");
  bad("compare", {{"a", "kimi-k3"}, {"b-quant", "FOO"}}, "b-quant");  // B's tier, named as B's
  bad("compare", {{"a", "kimi-k3"}, {"b", "llama-3.1-8b"}, {"b-quant", "UD-IQ1_S"}}, "b-quant");  // a build of A, not of B
  bad("stream", {{"model", "kimi-k3"}, {"gbps", "0"}}, "gbps");
  bad("stream", {{"model", "kimi-k3"}, {"bpw", "100"}}, "bpw");
  auto a = call_api("nosuchverb", RequestParams{});
  EXPECT_EQ(a.status, 404);
  EXPECT_EQ(json::parse(a.body)["error"]["field"], "verb");
}

TEST(ServerApi, HostileParameterSetsAreRefused) {
  auto throws_on = [](auto fn, const std::string& field) {
    try {
      fn();
      ADD_FAILURE() << "no error for " << field;
    } catch (const vc::InputError& e) {
      EXPECT_EQ(e.subject(), field);
    }
  };
  throws_on([] { RequestParams::from_json_body("{\"model\": "); }, "body");               // malformed
  throws_on([] { RequestParams::from_json_body("[1, 2]"); }, "body");                     // not an object
  throws_on([] { RequestParams::from_json_body(R"({"model": {"id": "x"}})"); }, "model");  // nested
  throws_on([] { RequestParams::from_json_body(R"({"model": null})"); }, "model");
  throws_on([] { RequestParams::from_pairs({{"model", "a"}, {"model", "b"}}); }, "model");  // repeated
  throws_on([] { RequestParams::from_pairs({{"model", std::string(2000, 'x')}}); }, "model");  // too long
  throws_on([] {
    std::vector<std::pair<std::string, std::string>> many;
    for (int i = 0; i < 40; ++i) many.push_back({"p" + std::to_string(i), "1"});
    RequestParams::from_pairs(many);
  }, "request");
  // Arrays become the CLI's comma lists.
  auto p = RequestParams::from_json_body(R"({"contexts": ["8K", 32768]})");
  EXPECT_EQ(p.get("contexts"), "8K,32768");
}

TEST(Api, AListWhereOneValueIsExpectedIsRefused) {
  // A JSON array becomes "1,2", which must not be read as the token count twelve.
  bad_params("estimate", RequestParams::from_json_body(R"({"model": "kimi-k3", "context": [1, 2]})"), "context");
  bad("estimate", {{"model", "kimi-k3"}, {"seqs", "1,5"}}, "seqs");
}
