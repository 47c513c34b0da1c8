// Speed of the planner: a plan with per-device allocation over 4, 8 and 16 H200s on two nodes
// (the box is the 16), and the whole-catalogue GPU check (`vramcalc check`) against one
// box over 6, 12 and all catalogue models, so the table shows how each grows.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "catalogue/catalogue.h"
#include "plan/check.h"
#include "plan/plan.h"

namespace {

// `per_node` GPUs of `gpu` on each of two nodes, 512 GB RAM per node at 80 GB/s (the CLI's default
// --ram-gbps).
vc::Box box_of(const std::string& gpu, uint64_t per_node, uint64_t nodes) {
  vc::Box b;
  b.gpus = vc::parse_gpus(gpu + "x" + std::to_string(per_node), "--gpu");
  b.nodes = nodes;
  b.ram_bytes = 512'000'000'000ull;
  b.ram_bandwidth = 80'000'000'000ull;
  return b;
}

// Kimi K3 at 1M context, layer split over every device of both nodes.
void BM_PlanTwoNodes(benchmark::State& state) {
  const vc::Model& model = *vc::Catalogue::builtin().find("kimi-k3");
  const auto per_node = static_cast<uint64_t>(state.range(0)) / 2;
  const vc::Box box = box_of("H200", per_node, 2);
  vc::Scenario s;
  s.context = 1048576;
  const vc::PlanOptions o;
  for (auto _ : state) benchmark::DoNotOptimize(vc::make_plan(model, s, box, o).fits_on_devices);
  state.SetComplexityN(state.range(0));
  state.counters["devices"] = static_cast<double>(box.device_count());
}
BENCHMARK(BM_PlanTwoNodes)->Arg(4)->Arg(8)->Arg(16)->Complexity(benchmark::oAuto)->Unit(benchmark::kMicrosecond);

// `vramcalc check --gpu 'RTX 4090x2' --ram 512GB`: every tier of every model until one fits, the
// largest context there and the decode speed. Args: how many catalogue models (0: all).
// The engine is in the name (BM_CheckCatalogue/llamacpp/0): its per-device answer decides the fits.
void BM_CheckCatalogue(benchmark::State& state, vc::EngineKind engine) {
  const auto& all = vc::Catalogue::builtin().models();
  const auto n = state.range(0) == 0 ? all.size() : std::min<size_t>(all.size(), static_cast<size_t>(state.range(0)));
  const std::vector<vc::Model> models(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  const vc::Box box = box_of("RTX 4090", 2, 1);
  vc::PlanOptions o;
  o.engine = engine;
  const vc::Scenario base;
  for (auto _ : state) benchmark::DoNotOptimize(vc::check_models(models, box, o, base).size());
  state.SetComplexityN(static_cast<int64_t>(n));
  state.counters["models"] = static_cast<double>(n);
}
BENCHMARK_CAPTURE(BM_CheckCatalogue, rule, vc::EngineKind::Rule)->Arg(6)->Arg(12)->Arg(0)->Complexity(benchmark::oAuto)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CheckCatalogue, llamacpp, vc::EngineKind::LlamaCpp)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CheckCatalogue, vllm, vc::EngineKind::Vllm)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CheckCatalogue, sglang, vc::EngineKind::Sglang)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace
