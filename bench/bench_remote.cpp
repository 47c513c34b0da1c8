// Remote header reads against a local HTTP server with latency injected before every answer
// (20 ms, a transatlantic round trip): the bench's GGUF fixtures (a 262,144-token tokenizer, ~1K to
// ~100K tensors) and safetensors shards (one, then a 16-shard set 1 or 8 at a time), read cold (the range cache off). Counters: round trips,
// bytes fetched, the header's own bytes, and the share of the file fetched in parts per million (target: under 1%, and
// never more round trips than ceil(log2(header / first range)) + 1; docs/performance.md).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../tests/http_test_server.h"
#include "fixtures.h"
#include "sources/gguf/gguf_file.h"
#include "sources/remote/http_source.h"
#include "sources/concurrent_reads.h"
#include "sources/safetensors/safetensors_file.h"
#include "sources/safetensors/safetensors_set.h"

namespace {

namespace fs = std::filesystem;
constexpr auto kLatency = std::chrono::milliseconds(20);
constexpr double kFirstGgufRange = 1 << 20;  // http_source.cpp: the first range of a .gguf URL

class RemoteFixtures {
 public:
  static RemoteFixtures& get() {
    static RemoteFixtures r;
    return r;
  }
  vc::testing::TestHttpServer& server() { return server_; }
  // The URL of GGUF fixture i; its header's bytes in `header`.
  std::string gguf(size_t i, uint64_t& header) {
    const fs::path p = dir_ / ("remote-" + std::to_string(i) + ".gguf");
    if (!fs::exists(p)) headers_[i] = vc::bench::write_gguf_fixture(p, vc::bench::kGgufFixtures[i]);
    header = headers_[i];
    server_.add("/" + p.filename().string(), p);
    return server_.url("/" + p.filename().string());
  }
  // The URLs of the shards of the 16-shard safetensors fixture, in order.
  std::vector<std::string> shards() {
    const fs::path d = dir_ / "shards";
    if (!fs::exists(d)) vc::bench::write_safetensors_fixture(d, vc::bench::kShardCounts[1]);
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(d)) {
      if (e.path().extension() == ".safetensors") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> urls;
    for (const auto& f : files) {
      server_.add("/" + f.filename().string(), f);
      urls.push_back(server_.url("/" + f.filename().string()));
    }
    return urls;
  }
  ~RemoteFixtures() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  RemoteFixtures() : dir_(fs::temp_directory_path() / ("vramcalc-bench-remote-" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    ::setenv("VRAMCALC_CACHE_MAX", "0", 1);  // every read cold: the network is what is measured
    server_.delay(kLatency);
  }
  fs::path dir_;
  uint64_t headers_[3] = {};
  vc::testing::TestHttpServer server_;
};

void report(benchmark::State& state, uint64_t requests, uint64_t bytes, uint64_t header, uint64_t file_size) {
  const auto n = static_cast<double>(state.iterations());
  state.counters["round_trips"] = static_cast<double>(requests) / n;
  state.counters["bytes_fetched"] = static_cast<double>(bytes) / n;
  state.counters["header_bytes"] = static_cast<double>(header);
  state.counters["fetched_per_header_byte"] = static_cast<double>(bytes) / n / static_cast<double>(header);
  state.counters["ppm_of_file"] = 1e6 * static_cast<double>(bytes) / n / static_cast<double>(file_size);  // 10,000 = 1%
}

void BM_RemoteGgufHeader(benchmark::State& state) {
  auto& fx = RemoteFixtures::get();
  uint64_t header = 0;
  const std::string url = fx.gguf(static_cast<size_t>(state.range(0)), header);
  const uint64_t r0 = fx.server().requests(), b0 = fx.server().bytes_served();
  uint64_t size = 0;
  for (auto _ : state) {
    auto src = vc::open_http_source(url);
    size = src->size();
    benchmark::DoNotOptimize(vc::read_gguf(*src).tensors.size());
  }
  report(state, fx.server().requests() - r0, fx.server().bytes_served() - b0, header, size);
  state.counters["round_trip_bound"] = std::ceil(std::log2(std::max(1.0, static_cast<double>(header) / kFirstGgufRange))) + 1;
}
BENCHMARK(BM_RemoteGgufHeader)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->UseRealTime();

// One shard header, then the whole 16-shard set read 1 or 8 shards at a time.
void BM_RemoteSafetensorsShard(benchmark::State& state) {
  auto& fx = RemoteFixtures::get();
  const std::string url = fx.shards().front();
  const uint64_t r0 = fx.server().requests(), b0 = fx.server().bytes_served();
  uint64_t size = 0, header = 0;
  for (auto _ : state) {
    auto src = vc::open_http_source(url);
    size = src->size();
    header = vc::read_safetensors(*src).header_bytes + 8;
  }
  report(state, fx.server().requests() - r0, fx.server().bytes_served() - b0, header, size);
}
BENCHMARK(BM_RemoteSafetensorsShard)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RemoteSafetensorsSet(benchmark::State& state) {
  auto& fx = RemoteFixtures::get();
  const std::vector<std::string> urls = fx.shards();
  const vc::Opener open = [](const std::string& u) { return vc::open_http_source(u); };
  const uint64_t r0 = fx.server().requests(), b0 = fx.server().bytes_served();
  for (auto _ : state) benchmark::DoNotOptimize(vc::read_safetensors_set(urls, open, static_cast<size_t>(state.range(0))).files.size());
  const auto n = static_cast<double>(state.iterations());
  state.counters["shards"] = static_cast<double>(urls.size());
  state.counters["requests"] = static_cast<double>(fx.server().requests() - r0) / n;
  state.counters["bytes_fetched"] = static_cast<double>(fx.server().bytes_served() - b0) / n;
}
BENCHMARK(BM_RemoteSafetensorsSet)->Arg(1)->Arg(vc::kConcurrentRemoteReads)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
