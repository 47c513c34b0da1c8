// Speed of the core arithmetic. Run: make bench (or build/vramcalc_bench --benchmark_min_time=0.1).
#include <benchmark/benchmark.h>

#include "catalogue/catalogue.h"
#include "engines/engine.h"
#include "estimate/estimate.h"
#include "estimate/sweep.h"

namespace {

const vc::Model& k31() { return *vc::Catalogue::builtin().find("kimi-k3.1-pro"); }

void BM_EstimateOneModel(benchmark::State& state) {
  vc::Scenario s;
  s.context = 1048576;
  k31();  // the catalogue loads once per process, outside the timed loop (a short run is one iteration)
  for (auto _ : state) benchmark::DoNotOptimize(vc::estimate(k31(), s).total_bytes);
}
BENCHMARK(BM_EstimateOneModel);

// One engine answer without devices (estimate --engine X): the engine is in the name.
void BM_EngineOneModel(benchmark::State& state, vc::EngineKind engine) {
  vc::EngineRequest r;
  r.model = &k31();
  r.scenario.context = 1048576;
  r.scenario.engine = engine;
  for (auto _ : state) benchmark::DoNotOptimize(vc::run_engine(r).total_bytes);
}
BENCHMARK_CAPTURE(BM_EngineOneModel, rule, vc::EngineKind::Rule);
BENCHMARK_CAPTURE(BM_EngineOneModel, llamacpp, vc::EngineKind::LlamaCpp);
BENCHMARK_CAPTURE(BM_EngineOneModel, vllm, vc::EngineKind::Vllm);
BENCHMARK_CAPTURE(BM_EngineOneModel, sglang, vc::EngineKind::Sglang);

void BM_SweepContexts(benchmark::State& state) {
  std::vector<uint64_t> contexts;
  for (uint64_t c = 4096; c <= 1048576; c *= 2) contexts.push_back(c);  // 4K ... 1M, 9 rows
  for (auto _ : state) benchmark::DoNotOptimize(vc::sweep(k31(), vc::Scenario{}, contexts).size());
}
BENCHMARK(BM_SweepContexts);

void BM_EstimateWholeCatalogue(benchmark::State& state) {
  const auto& models = vc::Catalogue::builtin().models();
  vc::Scenario s;
  s.context = 32768;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (const auto& m : models) sum += vc::estimate(m, s).total_bytes;
    benchmark::DoNotOptimize(sum);
  }
  state.counters["models"] = static_cast<double>(models.size());
}
BENCHMARK(BM_EstimateWholeCatalogue);

}  // namespace
