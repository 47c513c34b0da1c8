// Unified memory (issue 17): a unified device's capacity is the share the OS lets its GPU hold by
// default (data/devices.json gpu_share_rules), the rest is the host's RAM, and --gpu-wired-limit
// raises it as `sudo sysctl iogpu.wired_limit_mb=N` does. Figures worked out by hand below.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "cli_runner.h"
#include "core/error.h"
#include "engines/engine.h"
#include "plan/box_inputs.h"
#include "plan/detect.h"
#include "plan/hardware.h"
#include "plan/plan.h"

using namespace vc;

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

Box unified_box(const std::string& gpu, const std::string& limit = "default", const std::string& ram = "0") {
  BoxInputs in;
  in.gpu = gpu;
  in.gpu_wired_limit = limit;
  in.ram = ram;
  return in.to_box();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// M3 Max 64GB: 64 GiB = 68,719,476,736 bytes; macOS wires 3/4 above 32 GiB: 51,539,607,552 bytes
// (48 GiB, the 49152 MiB a 64 GB Mac reports in llama.cpp issue 1870); the host keeps 16 GiB.
TEST(UnifiedMemory, MacDefaultShareIsThreeQuarters) {
  const Box b = unified_box("m3-max-64gb");
  ASSERT_EQ(b.gpus.size(), 1u);
  ASSERT_TRUE(b.gpus[0].share);
  EXPECT_EQ(b.gpus[0].memory_bytes, 51'539'607'552u);
  EXPECT_EQ(b.gpus[0].share->physical, 68'719'476'736u);
  EXPECT_EQ(b.ram_bytes, 17'179'869'184u);  // 64 - 48 GiB: the rest of the one memory
  EXPECT_FALSE(b.gpus[0].share->raised);
  EXPECT_TRUE(has(b.gpus[0].share->formula, "75% of 64 GiB = 48 GiB, macOS's default GPU wired limit")) << b.gpus[0].share->formula;
  EXPECT_TRUE(has(b.gpus[0].share->raise, "sudo sysctl iogpu.wired_limit_mb=N"));
  EXPECT_TRUE(has(b.gpus[0].share->source, "https://github.com/ggml-org/llama.cpp/issues/1870"));
  EXPECT_EQ(b.vram_bytes(), 51'539'607'552u);
}

// A 32 GiB Mac gets 2/3: 34,359,738,368 x 2 / 3 = 22,906,492,245.33, rounded down; llama.cpp PR
// 2011 and ollama issue 434 print 21845.34 MiB for 32 GB M1/M2 Max (21,845.33 x 1,048,576).
TEST(UnifiedMemory, SmallMacsGetTwoThirds) {
  const GpuShareRule& rule = DeviceTable::builtin().gpu_share_rule("macos-wired-limit");
  EXPECT_EQ(default_gpu_share(rule, 32 * kGiB), 22'906'492'245u);
  EXPECT_EQ(default_gpu_share(rule, 96 * kGiB), 72 * kGiB);  // issue 3213: 96 GB M2 Max, 73728 MiB = 72 GiB
}

// Strix Halo 128 GiB: amdgpu's GTT is half the RAM by default: 68,719,476,736 bytes (64 GiB).
// DGX Spark: 137,438,953,472 - 6,775,310,909 (128 GiB less the 121.69 GiB DGX OS reports) =
// 130,663,642,563; the CPU side shares that pool, so no separate RAM is left (0: not checked).
TEST(UnifiedMemory, StrixHaloAndDgxSparkShares) {
  const Box halo = unified_box("strix-halo-128gb");
  EXPECT_EQ(halo.gpus[0].memory_bytes, 64 * kGiB);
  EXPECT_EQ(halo.ram_bytes, 64 * kGiB);
  EXPECT_TRUE(has(halo.gpus[0].share->formula, "50% of 128 GiB = 64 GiB, Linux amdgpu's default GTT size")) << halo.gpus[0].share->formula;
  const Box spark = unified_box("dgx-spark");
  EXPECT_EQ(spark.gpus[0].memory_bytes, 130'663'642'563u);
  EXPECT_EQ(spark.ram_bytes, 0u);
  EXPECT_THROW(unified_box("dgx-spark", "default", "8GB"), InputError);  // one pool: no RAM beside the GPU's share
  const Box carved = unified_box("dgx-spark", "100GiB", "8GB");        // a lower share leaves the CPU side 21.69 GiB
  EXPECT_EQ(carved.ram_bytes, 8'000'000'000u);
}

// --gpu-wired-limit 56GiB: 60,129,542,144 bytes on the GPU, 8 GiB (8,589,934,592) left for the
// host; 90% of 68,719,476,736 = 61,847,529,062.4, rounded down.
TEST(UnifiedMemory, RaisedLimit) {
  const Box b = unified_box("m3-max-64gb", "56GiB");
  EXPECT_EQ(b.gpus[0].memory_bytes, 56 * kGiB);
  EXPECT_EQ(b.ram_bytes, 8 * kGiB);
  EXPECT_TRUE(b.gpus[0].share->raised);
  EXPECT_EQ(unified_box("m3-max-64gb", "90%").gpus[0].memory_bytes, 61'847'529'062u);
  EXPECT_EQ(unified_box("m3-max-64gb", "57344MiB").gpus[0].memory_bytes, 56 * kGiB);  // iogpu.wired_limit_mb=57344
  EXPECT_EQ(unified_box("m3-max-64gb", "default", "16GiB").ram_bytes, 16 * kGiB);    // --ram up to the rest is taken as given
}

// Bad values: exit 2 naming the flag and the accepted forms; above the memory, on a discrete GPU,
// a plain MiB count without its unit, and --ram beyond what the share leaves are refused.
TEST(UnifiedMemory, BadLimitsAreRefused) {
  const char* plan = "plan qwen3-32b -q Q8_0 --gpu m3-max-64gb ";
  for (const char* bad : {"lots", "0%", "120%"}) {
    const CliResult r = run_cli(std::string(plan) + "--gpu-wired-limit " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << r.output;
    EXPECT_TRUE(has(r.output, "--gpu-wired-limit")) << r.output;
    EXPECT_TRUE(has(r.output, "accepted: a size such as 56GiB or 57344MiB")) << r.output;
  }
  const CliResult above = run_cli(std::string(plan) + "--gpu-wired-limit 65GiB");
  EXPECT_EQ(above.exit_code, 2);
  EXPECT_TRUE(has(above.output, "is above Apple M3 Max 64GB's memory: 64 GiB of 64 GiB can be given to the GPU")) << above.output;
  const CliResult bare = run_cli(std::string(plan) + "--gpu-wired-limit 57344");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_TRUE(has(bare.output, "write 57344MiB")) << bare.output;
  const CliResult discrete = run_cli("plan qwen3-32b --gpu h200 --gpu-wired-limit 100GB");
  EXPECT_EQ(discrete.exit_code, 2);
  EXPECT_TRUE(has(discrete.output, "--gpu names no such device")) << discrete.output;
  const CliResult ram = run_cli(std::string(plan) + "--ram 32GB");
  EXPECT_EQ(ram.exit_code, 2);
  EXPECT_TRUE(has(ram.output, "one memory, not two")) << ram.output;
  EXPECT_THROW(unified_box("m3-max-64gb", "65GiB"), InputError);
}

// Qwen3 32B at Q8_0 with a 40K context: weights 34.81 GB + cache 5 x 2.148 GB (the 8K figure) =
// 10.74 GB, + 15% overhead 6.83 GB = 52.38 GB: over the M3 Max's 48 GiB = 51.54 GB default share,
// under its 64 GiB = 68.72 GB. Short at the default, fits at 60 GiB, and the verdict says how to raise.
TEST(UnifiedMemory, FitsOnlyWithTheRaisedLimit) {
  const Model& m = *Catalogue::builtin().find("qwen3-32b");
  Scenario s;
  s.quant = "Q8_0";
  s.context = 40960;
  const Plan at_default = make_plan(m, s, unified_box("m3-max-64gb"), PlanOptions{});
  EXPECT_GT(at_default.estimate.total_bytes, 51'539'607'552u);
  EXPECT_LT(at_default.estimate.total_bytes, 68'719'476'736u);
  EXPECT_FALSE(at_default.fits_on_devices);
  EXPECT_TRUE(has(at_default.verdict, "It fits with the GPU's share raised above the OS default")) << at_default.verdict;
  EXPECT_TRUE(has(at_default.verdict, "sudo sysctl iogpu.wired_limit_mb=N")) << at_default.verdict;
  const Plan raised = make_plan(m, s, unified_box("m3-max-64gb", "60GiB"), PlanOptions{});
  EXPECT_TRUE(raised.fits_on_devices) << raised.verdict;
  EXPECT_FALSE(has(raised.verdict, "It fits with the GPU's share raised"));
  // The text names the share with its formula and source on the plan's own lines.
  const CliResult r = run_cli("plan qwen3-32b -q Q8_0 --context 40K --gpu m3-max-64gb");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "Apple M3 Max 64GB: GPU share 75% of 64 GiB = 48 GiB, macOS's default GPU wired limit; raise with sudo sysctl iogpu.wired_limit_mb=N")) << r.output;
  EXPECT_TRUE(has(r.output, "--gpu-wired-limit")) << r.output;
}

// estimate --engine llamacpp --gpu m3-max-64gb: the Metal device's capacity is the 48 GiB share,
// the host's the 16 GiB left, and the answer's notes say so.
TEST(UnifiedMemory, EngineAnswerUsesTheShare) {
  const Model& m = *Catalogue::builtin().find("qwen3-32b");
  Scenario s;
  s.quant = "Q8_0";
  EngineInputs in;
  in.engine = "llamacpp";
  in.gpu = "m3-max-64gb";
  const EngineAnswer a = run_engine(engine_request(m, s, in));
  bool gpu = false, host = false;
  for (const auto& d : a.devices) {
    if (d.name == "host") host = d.capacity && *d.capacity == 16 * kGiB;
    else gpu = d.capacity && *d.capacity == 48 * kGiB;
  }
  EXPECT_TRUE(gpu);
  EXPECT_TRUE(host);
  bool noted = false;
  for (const auto& n : a.notes) noted = noted || has(n, "GPU share 75% of 64 GiB = 48 GiB");
  EXPECT_TRUE(noted);
  in.gpu_wired_limit = "60GiB";
  for (const auto& d : run_engine(engine_request(m, s, in)).devices) {
    if (d.name != "host") {
      EXPECT_EQ(d.capacity.value_or(0), 60 * kGiB);
    }
  }
}

// check --detect: a detected unified device gets its GPU share as a planned one does.
// DGX Spark as nvidia-smi reports it ("NVIDIA GB10, [N/A]": no memory figure for unified memory):
// the table's 128 GiB less the 6,775,310,909 B firmware reserve = 130,663,642,563 B, all of it the
// GPU's (DGX OS); the CPU side draws on the same pool, so no host RAM is counted apart.
TEST(UnifiedMemory, DetectedDgxSparkGetsItsShare) {
  std::vector<std::string> found;
  Detected d;
  d.box.gpus = parse_nvidia_smi("NVIDIA GB10, [N/A]\n", found);
  ASSERT_EQ(d.box.gpus.size(), 1u);
  EXPECT_EQ(d.box.gpus[0].id, "dgx-spark");
  d.box.ram_bytes = 119 * kGiB;  // MemAvailable: the same memory, seen by Linux
  apply_detected_gpu_shares(d, "default", "--gpu-wired-limit");
  ASSERT_TRUE(d.box.gpus[0].share);
  EXPECT_EQ(d.box.gpus[0].memory_bytes, 130'663'642'563u);
  EXPECT_EQ(d.box.ram_bytes, 0u);
}

// Strix Halo 128GB found by detection with 100 GiB available: amdgpu's GTT default is half, 64 GiB,
// and the host gets the other 64 GiB (less than what /proc/meminfo says is free); with 20 GiB free
// the host gets 20 GiB; --gpu-wired-limit 96GiB leaves 32 GiB.
TEST(UnifiedMemory, DetectedUnifiedBoxSplitsTheMemoryOnce) {
  auto detected = [](uint64_t available, const std::string& limit) {
    Detected d;
    d.box.gpus = {DeviceTable::builtin().find("strix-halo-128gb", "--gpu")};
    d.box.ram_bytes = available;
    apply_detected_gpu_shares(d, limit, "--gpu-wired-limit");
    return d;
  };
  const Detected roomy = detected(100 * kGiB, "default");
  EXPECT_EQ(roomy.box.gpus[0].memory_bytes, 64 * kGiB);
  EXPECT_EQ(roomy.box.ram_bytes, 64 * kGiB);
  const Detected busy = detected(20 * kGiB, "default");
  EXPECT_EQ(busy.box.ram_bytes, 20 * kGiB);
  EXPECT_TRUE(has(busy.found.back(), "/proc/meminfo")) << busy.found.back();
  const Detected raised = detected(100 * kGiB, "96GiB");
  EXPECT_EQ(raised.box.gpus[0].memory_bytes, 96 * kGiB);
  EXPECT_EQ(raised.box.ram_bytes, 32 * kGiB);
  // A discrete card keeps the RAM /proc/meminfo gave; a limit without a unified device is refused.
  std::vector<std::string> found;
  Detected discrete;
  discrete.box.gpus = parse_nvidia_smi("NVIDIA GeForce RTX 4090, 24564\n", found);
  discrete.box.ram_bytes = 60 * kGiB;
  apply_detected_gpu_shares(discrete, "default", "--gpu-wired-limit");
  EXPECT_EQ(discrete.box.ram_bytes, 60 * kGiB);
  EXPECT_THROW(apply_detected_gpu_shares(discrete, "20GiB", "--gpu-wired-limit"), InputError);
}
