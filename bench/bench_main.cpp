// The benchmark binary's entry point.
//   vramcalc_bench [--benchmark_* flags]   runs the suite and prints one table (median per
//                                          benchmark when repeated, BigO rows for growth, targets)
//   vramcalc_bench --write-fixtures DIR    writes the reader fixtures into DIR for the scripts
//                                          (bench/compare-gguf-js.sh, bench/peak-memory.sh)
// --benchmark_format=json|csv keeps Google Benchmark's own output instead of the table.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fixtures.h"

namespace {

// The targets (issue 7), in nanoseconds; the table marks each row against its target.
const std::map<std::string, double> kTargetsNs = {
    {"BM_EstimateOneModel", 50e3},    // one estimate of a catalogue model: well under 50 us
    {"BM_CheckCatalogue/0", 50e6},    // the whole catalogue against one box: under 50 ms
};

double to_ns(double t, benchmark::TimeUnit u) {
  switch (u) {
    case benchmark::kNanosecond: return t;
    case benchmark::kMicrosecond: return t * 1e3;
    case benchmark::kMillisecond: return t * 1e6;
    case benchmark::kSecond: return t * 1e9;
  }
  return t;
}

std::string human_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

const char* big_o_name(benchmark::BigO o) {
  switch (o) {
    case benchmark::o1: return "O(1)";
    case benchmark::oN: return "O(N)";
    case benchmark::oNSquared: return "O(N^2)";
    case benchmark::oNCubed: return "O(N^3)";
    case benchmark::oLogN: return "O(log N)";
    case benchmark::oNLogN: return "O(N log N)";
    default: return "O(?)";
  }
}

const char* big_o_term(benchmark::BigO o) {
  switch (o) {
    case benchmark::o1: return "1";
    case benchmark::oN: return "N";
    case benchmark::oNSquared: return "N^2";
    case benchmark::oNCubed: return "N^3";
    case benchmark::oLogN: return "log2 N";
    case benchmark::oNLogN: return "N log2 N";
    default: return "f(N)";
  }
}

// One row per benchmark: the median of the repetitions (or the single run), its spread (cv), the
// user counters, and the target when the issue sets one. BigO rows say how the family grows.
class TableReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& context) override {
    fmt::print("vramcalc_bench: {} CPUs at {:.0f} MHz{}\n\n", context.cpu_info.num_cpus, context.cpu_info.cycles_per_second / 1e6,
               context.cpu_info.scaling == benchmark::CPUInfo::ENABLED ? " (frequency scaling on: figures vary)" : "");
    fmt::print("{:<34} {:>11} {:>7} {:>12}  {:<26} {}\n", "benchmark", "median", "cv", "per item", "counters", "target");
    fmt::print("{}\n", std::string(110, '-'));
    return true;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      const std::string name = run.benchmark_name();
      if (run.error_occurred) {
        fmt::print("{:<34} error: {}\n", name, run.error_message);
        continue;
      }
      if (run.run_type == Run::RT_Aggregate) {
        // cv as stddev / mean: both are times in the same unit, whatever the library does with
        // its own percentage aggregate.
        if (run.aggregate_name == "mean") mean_[run.run_name.str()] = run.GetAdjustedRealTime();
        if (run.aggregate_name == "stddev") stddev_[run.run_name.str()] = run.GetAdjustedRealTime();
        if (run.aggregate_name == "median") rows_.push_back(run);
        if (run.aggregate_name == "BigO") {
          // The best fit of time against N (oAuto), and its coefficient in the family's time unit.
          bigo_.push_back(fmt::format("{:<34} grows as {}: {} x {}", run.run_name.function_name, big_o_name(run.complexity),
                                      human_ns(to_ns(run.GetAdjustedRealTime(), run.time_unit)), big_o_term(run.complexity)));
        }
        continue;
      }
      if (run.repetitions <= 1) rows_.push_back(run);  // not repeated: the run is the figure
    }
  }

  void Finalize() override {
    for (const auto& run : rows_) {
      const std::string base = run.run_name.str();
      const double ns = to_ns(run.GetAdjustedRealTime(), run.time_unit);
      std::string counters, per_item, target;
      for (const auto& [k, c] : run.counters) {
        if (k == "items_per_second") {
          if (c.value > 0) per_item = human_ns(1e9 / c.value);
        } else if (k != "bytes_per_second") {
          counters += fmt::format("{}={:.0f} ", k, c.value);
        }
      }
      if (auto t = kTargetsNs.find(base); t != kTargetsNs.end()) {
        target = fmt::format("{} {}", ns < t->second ? "under" : "OVER", human_ns(t->second));
      }
      std::string cv_text;
      if (auto m = mean_.find(base), sd = stddev_.find(base); m != mean_.end() && sd != stddev_.end() && m->second > 0) {
        cv_text = fmt::format("{:.1f}%", 100 * sd->second / m->second);
      }
      fmt::print("{:<34} {:>11} {:>7} {:>12}  {:<26} {}\n", base, human_ns(ns), cv_text, per_item, counters, target);
    }
    if (!bigo_.empty()) fmt::print("\n");
    for (const auto& line : bigo_) fmt::print("{}\n", line);
    std::fflush(stdout);
  }

 private:
  std::vector<Run> rows_;
  std::map<std::string, double> mean_, stddev_;
  std::vector<std::string> bigo_;
};

int write_fixtures(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& fx : vc::bench::kGgufFixtures) {
    const auto p = dir / ("fixture-" + std::to_string(fx.tensors()) + ".gguf");
    const uint64_t header = vc::bench::write_gguf_fixture(p, fx);
    fmt::print("{}\t{} tensors\theader {} bytes\tfile {} bytes\n", p.string(), fx.tensors(), header, std::filesystem::file_size(p));
  }
  for (uint64_t shards : vc::bench::kShardCounts) {
    const auto p = dir / ("safetensors-" + std::to_string(shards));
    vc::bench::write_safetensors_fixture(p, shards);
    fmt::print("{}\t{} shards\n", p.string(), shards);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--write-fixtures") == 0) return write_fixtures(argv[i + 1]);
  }
  bool own_format = false;
  for (int i = 1; i < argc; ++i) own_format |= std::strncmp(argv[i], "--benchmark_format", 18) == 0;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (own_format) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    TableReporter table;
    benchmark::RunSpecifiedBenchmarks(&table);
  }
  benchmark::Shutdown();
  return 0;
}
