// The API routes of the planner and the readers: /api/plan, /api/check, /api/devices and
// /api/inspect. Each answers the very document the CLI prints with --json (compared with the
// built binary's output), and each kind of bad request gets a 4xx naming the field.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "http_test_server.h"
#include "server/api.h"
#include "server/caller_files.h"
#include "server/request_params.h"
#include "sources/remote/http_source.h"
#include "sources/remote/location.h"
#include "tiny_gguf.h"

using nlohmann::json;
using vc::server::call_api;
using vc::server::RequestParams;

namespace {

json ok(std::string_view verb, const std::vector<std::pair<std::string, std::string>>& pairs) {
  auto a = call_api(verb, RequestParams::from_pairs(pairs));
  EXPECT_EQ(a.status, 200) << a.body;
  return json::parse(a.body);
}

// Expects a 4xx (by default 400) naming `field`, with a message.
void bad(std::string_view verb, const std::vector<std::pair<std::string, std::string>>& pairs, const std::string& field, int status = 400) {
  auto a = call_api(verb, RequestParams::from_pairs(pairs));
  EXPECT_EQ(a.status, status) << verb << " " << a.body;
  json j = json::parse(a.body);
  EXPECT_EQ(j["error"]["field"], field) << a.body;
  EXPECT_FALSE(j["error"]["message"].get<std::string>().empty());
}

json cli_json(const std::string& args) {
  CliResult r = run_cli(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return json::parse(r.output);
}

std::filesystem::path tiny_llama() { return vc::testing::tiny_gguf("tiny-llama.gguf"); }

}  // namespace

// Seed 002: "Thirteen H200s at 141 GB each" hold K3 at 1M. The API's plan is the CLI's, byte for byte.
TEST(ServerPlanApi, PlanIsTheCliJsonDocument) {
  json api = ok("plan", {{"model", "kimi-k3"}, {"gpu", "H200x13"}, {"context", "1M"}});
  EXPECT_EQ(api, cli_json("plan kimi-k3 --gpu H200x13 --context 1M"));
  EXPECT_EQ(api["schema"], "vramcalc.plan/2");
  EXPECT_EQ(api["devices"].size(), 13u);
  EXPECT_FALSE(api.contains("display"));  // only with units=
}

// Display strings: the busiest device's figures as the CLI's text table prints them.
TEST(ServerPlanApi, PlanDisplayIsTheCliText) {
  json api = ok("plan", {{"model", "kimi-k3"}, {"gpu", "H200x13"}, {"context", "1M"}, {"units", "gb"}});
  ASSERT_EQ(api["display"]["devices"].size(), 13u);
  const std::string text = run_cli("plan kimi-k3 --gpu H200x13 --context 1M").output;
  const auto& busiest = api["display"]["devices"][api["busiest"].get<std::size_t>()];
  const std::size_t line = text.find("<- busiest");
  ASSERT_NE(line, std::string::npos) << text;
  const std::string row = text.substr(text.rfind('\n', line) + 1, line - text.rfind('\n', line) - 1);
  for (const char* key : {"weights", "total", "capacity", "headroom"}) {
    EXPECT_NE(row.find(busiest[key].get<std::string>()), std::string::npos) << key << " not in: " << row;
  }
  EXPECT_EQ(api["display"]["context"], "1M");
}

TEST(ServerPlanApi, CheckIsTheCliJsonDocument) {
  json api = ok("check", {{"gpu", "H200x8"}});
  EXPECT_EQ(api, cli_json("check --gpu H200x8"));
  EXPECT_EQ(api["box"], "8 x H200 (141.0 GB)");
  EXPECT_TRUE(api["found"].empty());  // --detect is the CLI's alone
}

// units=gb adds each row as the CLI's text table prints it, and the quant that reproduces the tier.
TEST(ServerPlanApi, CheckDisplayMatchesTheCliTableAndGivesThePlanQuant) {
  json api = ok("check", {{"gpu", "3090,3080Ti"}, {"ram", "64GB"}, {"units", "gb"}});
  const std::string text = run_cli("check --gpu 3090,3080Ti --ram 64GB").output;
  for (const auto& r : api["rows"]) {
    const std::string id = r["model"];
    const std::size_t at = text.find("\n" + id + " ");
    ASSERT_NE(at, std::string::npos) << id;
    const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
    const auto& d = r["display"];
    EXPECT_EQ(line.substr(line.find_last_not_of(' ', line.size() - 1) + 1 - d["decode_tok_s"].get<std::string>().size()), d["decode_tok_s"]) << line;
    EXPECT_NE(line.find(d["total"].get<std::string>()), std::string::npos) << line;
    if (r["fit"] == "none" || r["fit"] == "unreleased") continue;  // no plan tier for weights that do not exist
    // The plan at that quant has the same weights tier.
    std::vector<std::pair<std::string, std::string>> p = {{"model", id}, {"gpu", "3090,3080Ti"}, {"ram", "64GB"}};
    if (!d["quant"].get<std::string>().empty()) p.emplace_back("quant", d["quant"]);
    EXPECT_EQ(ok("plan", p)["weights_tier"], r["tier"]) << id;
  }
}

// data/devices.json: the H200 is 141 GB of HBM3e at 4.8 TB/s (NVIDIA's H200 product page).
TEST(ServerPlanApi, DevicesIsTheCliJsonDocument) {
  json api = ok("devices", {});
  EXPECT_EQ(api, cli_json("devices"));
  bool h200 = false;
  for (const auto& d : api) {
    if (d["id"] != "h200") continue;
    h200 = true;
    EXPECT_EQ(d["memory_bytes"], 141'000'000'000ull);
    EXPECT_EQ(d["bandwidth_bytes_per_s"], 4'800'000'000'000ull);
  }
  EXPECT_TRUE(h200);
}

TEST(ServerPlanApi, BadBoxesNameTheField) {
  bad("plan", {{"model", "kimi-k3"}, {"gpu", "Z9000"}}, "gpu");               // unknown device
  bad("check", {{"gpu", "H200x100000"}}, "gpu");                             // more than 64 per node
  bad("check", {{"gpu", "H200x0"}}, "gpu");
  bad("check", {{"gpu", "H200,"}}, "gpu");                                   // empty entry
  bad("check", {{"gpu", std::string(900, 'x')}}, "gpu");
  bad("plan", {{"model", "kimi-k3"}, {"gpu", "H200"}, {"nodes", "100000"}}, "nodes");
  bad("plan", {{"model", "kimi-k3"}, {"gpu", "H200"}, {"nodes", "0"}}, "nodes");
  // The CLI plans 64 x 1,024 devices (seconds of CPU, a 24 MB answer); the server stops at 1,024 in all.
  bad("check", {{"gpu", "H200x64"}, {"nodes", "1024"}}, "nodes");
  bad("plan", {{"model", "kimi-k3"}, {"gpu", "H200x64"}, {"nodes", "17"}}, "nodes");
  EXPECT_EQ(ok("plan", {{"model", "llama-3.1-8b"}, {"gpu", "H200x64"}, {"nodes", "16"}})["devices"].size(), 1024u);
  bad("check", {{"ram", "lots"}}, "ram");
  bad("check", {{"ram", "99999999999999999999GB"}}, "ram");
  bad("check", {{"ssd-gbps", "-5"}}, "ssd-gbps");
  bad("plan", {{"model", "kimi-k3"}, {"engine", "tensorrt"}}, "engine");
  bad("plan", {{"model", "kimi-k3"}, {"split", "diagonal"}}, "split");
  bad("plan", {{"model", "kimi-k3"}, {"hot-cache", "maybe"}}, "hot-cache");
  bad("plan", {{"model", "kimi-k3"}, {"expert-skew", "9"}}, "expert-skew");
  // A skew is the hot-expert cache's, which is off by default (no llama.cpp, vLLM or SGLang cache).
  bad("plan", {{"model", "kimi-k3"}, {"expert-skew", "0.8"}}, "expert-skew");
  bad("plan", {{"model", "kimi-k3"}, {"expert-skew", "0.8"}, {"hot-cache", "off"}}, "expert-skew");
  const std::vector<std::pair<std::string, std::string>> offloaded = {{"model", "kimi-k3"}, {"quant", "UD-IQ1_S"}, {"gpu", "RTX 4090"}, {"ram", "768GB"}};
  const json plain = ok("plan", offloaded);
  EXPECT_EQ(plain["offload"]["hot_cache"], false);
  EXPECT_EQ(plain["offload"]["skew"], 0.0);
  auto hot = offloaded;
  hot.emplace_back("hot-cache", "on");
  hot.emplace_back("expert-skew", "0.8");
  const json cached = ok("plan", hot);
  EXPECT_EQ(cached["offload"]["hot_cache"], true);
  EXPECT_EQ(cached["offload"]["skew"], 0.8);
  bad("plan", {{"model", "kimi-k3"}, {"efficiency", "150"}}, "efficiency");
  bad("plan", {{"model", "kimi-k3"}, {"threads", "0"}}, "threads");
  bad("plan", {{"model", "kimi-k3"}, {"threads", "lots"}}, "threads");
  bad("plan", {{"model", "kimi-k3"}, {"threads", "5000"}}, "threads");
  bad("plan", {{"model", "kimi-k3"}, {"seqs", "0"}}, "seqs");
  bad("plan", {{"gpu", "H200x8"}}, "model");                                  // required
  bad("plan", {{"model", "/etc/passwd"}}, "model");                           // catalogue ids only
  bad("check", {{"detect", "1"}}, "detect");                                  // the server's GPUs are not the caller's
  bad("check", {{"units", "furlongs"}}, "units");
  bad("devices", {{"gpu", "H200"}}, "gpu");                                   // devices takes no parameters
}

// The server never reads a path a client names: only http(s):// URLs and hf: specs.
TEST(ServerPlanApi, InspectRefusesLocalPaths) {
  bad("inspect", {}, "source");
  bad("inspect", {{"source", tiny_llama().string()}}, "source");
  bad("inspect", {{"source", "/etc/passwd"}}, "source");
  bad("inspect", {{"source", "../../etc/passwd"}}, "source");
  bad("inspect", {{"source", "file:///etc/passwd"}}, "source");
  bad("inspect", {{"source", "~/model.gguf"}}, "source");
  bad("inspect", {{"source", "hf:not a repo"}}, "source");
  bad("inspect", {{"source", "hf:org/repo/../../x"}}, "source");
  bad("inspect", {{"source", "http://127.0.0.1:1/model.gguf"}}, "source");  // nothing listens on port 1
  bad("inspect", {{"source", "hf:org/repo"}, {"hf-endpoint", "http://x"}}, "hf-endpoint");
}

class ServerInspectApi : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("vramcalc-api-inspect-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ::setenv("VRAMCALC_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("VRAMCALC_CACHE_DIR");
    vc::set_hf_endpoint("");
    vc::server::set_remote_timeout(std::chrono::seconds(15));
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

// A GGUF over HTTP and as hf:: the same tensors as the CLI reads from the local file.
TEST_F(ServerInspectApi, InspectsUrlsAndHubSpecs) {
  vc::testing::TestHttpServer server;
  server.add("/files/tiny-llama.gguf", tiny_llama());
  server.add("/org/tiny/resolve/main/tiny-llama.gguf", tiny_llama());
  json local = cli_json("inspect " + tiny_llama().string());
  json api = ok("inspect", {{"source", server.url("/files/tiny-llama.gguf")}});
  EXPECT_EQ(api["schema"], "vramcalc.inspect/1");
  EXPECT_EQ(api["tensor_bytes"], local["tensor_bytes"]);
  EXPECT_EQ(api["tensor_params"], local["tensor_params"]);
  EXPECT_EQ(api["by_dtype"], local["by_dtype"]);
  EXPECT_EQ(api["file_bytes"], std::filesystem::file_size(tiny_llama()));
  vc::set_hf_endpoint(server.root());
  json hub = ok("inspect", {{"source", "hf:org/tiny/tiny-llama.gguf"}});
  EXPECT_EQ(hub["tensor_bytes"], local["tensor_bytes"]);
  bad("inspect", {{"source", "hf:org/missing/model.gguf"}}, "source");  // 404
}

// A stalled server: the request ends at the budget with 504, not at curl's minute-long limits.
TEST_F(ServerInspectApi, InspectIsBoundedByATimeout) {
  vc::testing::TestHttpServer server;
  server.add("/slow.gguf", tiny_llama());
  server.delay(std::chrono::milliseconds(900));
  vc::server::set_remote_timeout(std::chrono::milliseconds(150));
  const auto start = std::chrono::steady_clock::now();
  bad("inspect", {{"source", server.url("/slow.gguf")}}, "source", 504);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(800));
}

// The deadline itself: once spent, no request starts; nested budgets cannot extend it.
TEST_F(ServerInspectApi, RemoteDeadlineStopsReads) {
  vc::testing::TestHttpServer server;
  server.add("/a.gguf", tiny_llama());
  vc::RemoteDeadline outer(std::chrono::milliseconds(0));
  vc::RemoteDeadline inner(std::chrono::seconds(60));
  EXPECT_THROW(vc::open_http_source(server.url("/a.gguf")), vc::RemoteTimeout);
  EXPECT_EQ(server.requests(), 0u);
}

// Every tier is tried; `prefer` picks among those that fit. One RTX 4090 (24 GiB), 64 GB of RAM and
// a 5 GB/s SSD hold Kimi K3 only with offload; speed and balanced pick a smaller tier than quality
// (the native 1,560.94 GB checkpoint streams far more bytes per token), and decode faster.
TEST(ServerPlanApi, CheckPreferPicksAmongEveryFittingTier) {
  auto k3 = [](const json& check) {
    for (const auto& r : check["rows"]) {
      if (r["model"] == "kimi-k3") return r;
    }
    return json();
  };
  const std::vector<std::pair<std::string, std::string>> box = {{"gpu", "rtx-4090"}, {"ram", "64GB"}, {"ssd-gbps", "5"}};
  auto with = [&](const std::string& prefer) {
    auto p = box;
    p.emplace_back("prefer", prefer);
    return k3(ok("check", p));
  };
  const json quality = with("quality"), speed = with("speed"), balanced = with("balanced");
  ASSERT_EQ(quality["fit"], "offload");
  EXPECT_EQ(quality["tier"], "native MXFP4");  // the largest tier that fits with offload
  EXPECT_EQ(balanced, speed);                   // offloaded: balanced is speed
  EXPECT_LT(speed["weights_bytes"].get<uint64_t>(), quality["weights_bytes"].get<uint64_t>());
  EXPECT_GT(speed["decode_tok_s"].get<double>(), quality["decode_tok_s"].get<double>());
  EXPECT_GT(speed["tiers_fitting"].get<uint64_t>(), 1u);
  // The split: a 24 GiB card, the rest in 64 GB of RAM and on the SSD; together at least the weights.
  EXPECT_GT(speed["gpu_bytes"].get<uint64_t>(), 0u);
  EXPECT_LE(speed["gpu_bytes"].get<uint64_t>(), 25'769'803'776u);
  EXPECT_GT(speed["ssd_bytes"].get<uint64_t>(), 0u);
  EXPECT_GE(speed["gpu_bytes"].get<uint64_t>() + speed["ram_bytes"].get<uint64_t>() + speed["ssd_bytes"].get<uint64_t>(),
            speed["weights_bytes"].get<uint64_t>());
  bad("check", {{"prefer", "cheapest"}}, "prefer");
}

// A model that fits nowhere says what it would take: the smallest tier's total in cards of the box's
// largest GPU (ceil(total / 24 GiB) RTX 4090s), from the row's own total.
TEST(ServerPlanApi, CheckSaysWhatItWouldTake) {
  const json check = ok("check", {{"gpu", "rtx-4090"}});
  for (const auto& r : check["rows"]) {
    if (r["model"] != "kimi-k3") continue;
    ASSERT_EQ(r["fit"], "none");
    const uint64_t total = r["total_bytes"].get<uint64_t>();
    const uint64_t cards = (total + 25'769'803'776u - 1) / 25'769'803'776u;
    EXPECT_NE(r["note"].get<std::string>().find("at least " + std::to_string(cards) + " x GeForce RTX 4090"), std::string::npos) << r["note"];
    EXPECT_NE(r["quant"].get<std::string>(), "");  // the smallest tier, not the native checkpoint
    return;
  }
  FAIL() << "no kimi-k3 row";
}

// `quant` asks for one tier: every row that fits is at it (or the native size it clamps to).
TEST(ServerPlanApi, CheckQuantTriesOneTier) {
  const json check = ok("check", {{"gpu", "H200x8"}, {"quant", "Q4_K_M"}});
  for (const auto& r : check["rows"]) {
    if (r["fit"] == "unreleased") continue;  // no tier is tried for weights nobody can download
    EXPECT_EQ(r["tiers_tried"], 1u) << r["model"];
    if (r["fit"] != "none") {
      EXPECT_TRUE(r["tier"] == "Q4_K_M" || r["tier"].get<std::string>().rfind("native", 0) == 0) << r["tier"];
    }
  }
}
