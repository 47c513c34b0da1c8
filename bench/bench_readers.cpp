// Speed of the checkpoint readers on headers written by the benchmark (bench/fixtures.h): a GGUF
// with ~1K, ~10K and ~100K tensors and a 262,144-token tokenizer, and safetensors folders of 4, 16
// and 64 shards. Three sizes each, so the table shows how the cost grows (BigO rows).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "fixtures.h"
#include "sources/checkpoint.h"
#include "sources/gguf/gguf_file.h"
#include "sources/io/byte_source.h"

namespace {

namespace fs = std::filesystem;

const auto& kGguf = vc::bench::kGgufFixtures;

// Fixtures are written once per process into one temp folder, removed at exit.
class FixtureDir {
 public:
  static FixtureDir& get() {
    static FixtureDir d;
    return d;
  }
  const std::string& gguf(size_t i) {
    auto it = gguf_.find(i);
    if (it == gguf_.end()) {
      const fs::path p = dir_ / ("fixture-" + std::to_string(kGguf[i].tensors()) + ".gguf");
      header_bytes_[i] = vc::bench::write_gguf_fixture(p, kGguf[i]);
      it = gguf_.emplace(i, p.string()).first;
    }
    return it->second;
  }
  uint64_t gguf_header_bytes(size_t i) { return gguf(i), header_bytes_[i]; }
  const std::string& safetensors(uint64_t shards) {
    auto it = st_.find(shards);
    if (it == st_.end()) {
      const fs::path p = dir_ / ("safetensors-" + std::to_string(shards));
      vc::bench::write_safetensors_fixture(p, shards);
      it = st_.emplace(shards, p.string()).first;
    }
    return it->second;
  }
  ~FixtureDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

 private:
  FixtureDir() : dir_(fs::temp_directory_path() / ("vramcalc-bench-" + std::to_string(::getpid()))) { fs::create_directories(dir_); }
  fs::path dir_;
  std::map<size_t, std::string> gguf_;
  std::map<size_t, uint64_t> header_bytes_;
  std::map<uint64_t, std::string> st_;
};

// The GGUF reader alone: open, parse the header, every tensor info.
void BM_ReadGgufHeader(benchmark::State& state) {
  const auto i = static_cast<size_t>(state.range(0));
  const std::string& path = FixtureDir::get().gguf(i);
  for (auto _ : state) {
    auto src = vc::open_file_source(path);
    benchmark::DoNotOptimize(vc::read_gguf(*src).tensors.size());
  }
  const auto tensors = static_cast<int64_t>(kGguf[i].tensors());
  state.SetComplexityN(tensors);
  state.SetItemsProcessed(state.iterations() * tensors);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(FixtureDir::get().gguf_header_bytes(i)));
  state.counters["tensors"] = static_cast<double>(tensors);
}
BENCHMARK(BM_ReadGgufHeader)->DenseRange(0, 2)->Complexity(benchmark::oAuto)->Unit(benchmark::kMillisecond);

// What `vramcalc inspect FILE` does before printing: read, tally tensors by class, map the model.
void BM_InspectGguf(benchmark::State& state) {
  const auto i = static_cast<size_t>(state.range(0));
  const std::string& path = FixtureDir::get().gguf(i);
  for (auto _ : state) benchmark::DoNotOptimize(vc::inspect_checkpoint(path).tally.bytes);
  const auto tensors = static_cast<int64_t>(kGguf[i].tensors());
  state.SetComplexityN(tensors);
  state.SetItemsProcessed(state.iterations() * tensors);
  state.counters["tensors"] = static_cast<double>(tensors);
}
BENCHMARK(BM_InspectGguf)->DenseRange(0, 2)->Complexity(benchmark::oAuto)->Unit(benchmark::kMillisecond);

// A sharded safetensors folder: the index, every shard's header, config.json, tally and model.
void BM_InspectSafetensors(benchmark::State& state) {
  const auto shards = static_cast<uint64_t>(state.range(0));
  const std::string& dir = FixtureDir::get().safetensors(shards);
  uint64_t tensors = 0;
  for (auto _ : state) {
    auto inspection = vc::inspect_checkpoint(dir);
    tensors = inspection.tally.tensors;
    benchmark::DoNotOptimize(tensors);
  }
  state.SetComplexityN(static_cast<int64_t>(shards));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(tensors));
  state.counters["shards"] = static_cast<double>(shards);
  state.counters["tensors"] = static_cast<double>(tensors);
}
BENCHMARK(BM_InspectSafetensors)->Arg(vc::bench::kShardCounts[0])->Arg(vc::bench::kShardCounts[1])->Arg(vc::bench::kShardCounts[2])->Complexity(benchmark::oAuto)->Unit(benchmark::kMillisecond);

}  // namespace
