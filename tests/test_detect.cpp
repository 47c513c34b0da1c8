// check --detect from captured probe outputs (src/plan/detect.cpp): Apple silicon from sysctl,
// Strix Halo from /proc/cpuinfo, /proc/meminfo and amdgpu sysfs, each mapped to the device table
// with its GPU share; and the bounded probe runner (src/plan/bounded_command.cpp) never hangs.
#include <gtest/gtest.h>

#include "core/error.h"
#include "plan/bounded_command.h"
#include "plan/detect.h"
#include "plan/unified_memory.h"

using namespace vc;

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

MachineProbes mac(const std::string& chip, uint64_t memsize, uint64_t wired_limit_mb) {
  MachineProbes p;
  // `sysctl hw.memsize machdep.cpu.brand_string iogpu.wired_limit_mb` as macOS prints it.
  p.sysctl = "hw.memsize: " + std::to_string(memsize) + "\nmachdep.cpu.brand_string: " + chip + "\niogpu.wired_limit_mb: " + std::to_string(wired_limit_mb) + "\n";
  p.cpus = 16;
  return p;
}

// A 128 GB Ryzen AI Max+ 395 at the defaults: amdgpu reports 63,968 MiB of GTT
// (https://github.com/antirez/ds4/issues/475), half of what Linux counts as RAM (gttsize default
// "1/2 RAM", kernel docs), so MemTotal is 127,936 MiB = 131,006,464 kB; the BIOS carve-out is
// 512 MiB of VRAM (mem_info_vram_total 536,870,912).
MachineProbes strix_halo(uint64_t gtt_mib) {
  MachineProbes p;
  p.cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD RYZEN AI MAX+ 395 w/ Radeon 8060S\n";
  p.meminfo = "MemTotal:       131006464 kB\nMemFree:        1000 kB\nMemAvailable:   120000000 kB\n";
  p.amd_cards = {{0, "536870912\n", std::to_string(gtt_mib * kMiB) + "\n"}};
  p.cpus = 32;
  return p;
}

}  // namespace

// M3 Max 64GB: the table's m3-max-64gb; macOS's default wired limit above 32 GiB is 3/4
// (recommendedMaxWorkingSetSize 49,152 MiB on a 64 GB Mac, ggml-org/llama.cpp#1870): 48 GiB =
// 51,539,607,552 B for the GPU, 16 GiB = 17,179,869,184 B for the host (no /proc/meminfo on a Mac).
TEST(Detect, AppleSiliconFromSysctlGetsTheWiredLimitShare) {
  Detected d = detect_from(mac("Apple M3 Max", 64 * kGiB, 0));
  ASSERT_EQ(d.box.gpus.size(), 1u);
  EXPECT_EQ(d.box.gpus[0].id, "m3-max-64gb");
  apply_detected_gpu_shares(d, "default", "--gpu-wired-limit");
  EXPECT_EQ(d.box.gpus[0].memory_bytes, 51'539'607'552u);
  EXPECT_EQ(d.box.ram_bytes, 17'179'869'184u);
  EXPECT_EQ(d.cpus, 16u);
}

// iogpu.wired_limit_mb=57344 set by the user: the GPU may wire 57,344 MiB = 60,129,542,144 B, and
// 64 - 56 = 8 GiB is left to the host; --gpu-wired-limit replaces what was read.
TEST(Detect, AppleWiredLimitSetOnTheMachineIsTheShare) {
  Detected d = detect_from(mac("Apple M3 Max", 64 * kGiB, 57344));
  apply_detected_gpu_shares(d, "default", "--gpu-wired-limit");
  ASSERT_TRUE(d.box.gpus[0].share);
  EXPECT_TRUE(d.box.gpus[0].share->raised);
  EXPECT_EQ(d.box.gpus[0].memory_bytes, 60'129'542'144u);
  EXPECT_EQ(d.box.ram_bytes, 8 * kGiB);
  Detected told = detect_from(mac("Apple M3 Max", 64 * kGiB, 57344));
  apply_detected_gpu_shares(told, "40GiB", "--gpu-wired-limit");
  EXPECT_EQ(told.box.gpus[0].memory_bytes, 40 * kGiB);
  EXPECT_EQ(told.box.ram_bytes, 24 * kGiB);
}

// A Mac the table lacks (M2 Max 96GB): a detected unified device under macOS's rule, 3/4 of
// 96 GiB = 73,728 MiB (the figure llama.cpp logs on a 96 GB M2 Max, ggml-org/llama.cpp#3213).
TEST(Detect, AnAppleChipTheTableLacksKeepsTheRule) {
  Detected d = detect_from(mac("Apple M2 Max", 96 * kGiB, 0));
  ASSERT_EQ(d.box.gpus.size(), 1u);
  EXPECT_EQ(d.box.gpus[0].id, "detected");
  EXPECT_EQ(d.box.gpus[0].name, "Apple M2 Max 96GB");
  apply_detected_gpu_shares(d, "default", "--gpu-wired-limit");
  EXPECT_EQ(d.box.gpus[0].memory_bytes, 73728 * kMiB);
  // An Intel Mac's brand string is not Apple silicon: CPU only.
  EXPECT_TRUE(detect_from(mac("Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz", 16 * kGiB, 0)).box.gpus.empty());
}

// Strix Halo at the defaults: MemTotal 127,936 MiB + 512 MiB carve-out = 128,448 MiB, 2,624 MiB
// under the table's 128 GiB (firmware's), so strix-halo-128gb. The GPU maps 512 + 63,968 = 64,480
// MiB = 67,612,180,480 B; the host gets 131,072 - 64,480 = 66,592 MiB = 69,826,772,992 B (under
// the 120,000,000 kB MemAvailable, so not capped).
TEST(Detect, StrixHaloFromSysfsGetsWhatAmdgpuMaps) {
  Detected d = detect_from(strix_halo(63968));
  ASSERT_EQ(d.box.gpus.size(), 1u);
  EXPECT_EQ(d.box.gpus[0].id, "strix-halo-128gb");
  apply_detected_gpu_shares(d, "default", "--gpu-wired-limit");
  EXPECT_EQ(d.box.gpus[0].memory_bytes, 67'612'180'480u);
  EXPECT_EQ(d.box.ram_bytes, 69'826'772'992u);
  EXPECT_NE(d.box.gpus[0].share->formula.find("GTT"), std::string::npos) << d.box.gpus[0].share->formula;
  // ttm.pages_limit raised to 96 GiB: GTT 98,304 MiB; share 98,816 MiB = 103,616,086,016 B.
  Detected raised = detect_from(strix_halo(98304));
  apply_detected_gpu_shares(raised, "default", "--gpu-wired-limit");
  EXPECT_EQ(raised.box.gpus[0].memory_bytes, 103'616'086'016u);
  // --gpu-wired-limit replaces the reading: 96 GiB, 32 GiB to the host.
  Detected told = detect_from(strix_halo(63968));
  apply_detected_gpu_shares(told, "96GiB", "--gpu-wired-limit");
  EXPECT_EQ(told.box.gpus[0].memory_bytes, 96 * kGiB);
  EXPECT_EQ(told.box.ram_bytes, 32 * kGiB);
}

// Other AMD machines keep the discrete reading: a 24 GiB card is a GPU, a 512 MiB carve-out on a
// desktop CPU is not; NVIDIA found by nvidia-smi comes first.
TEST(Detect, OtherMachinesKeepTheDiscreteReading) {
  MachineProbes desktop;
  desktop.cpuinfo = "model name\t: AMD Ryzen 9 7950X 16-Core Processor\n";
  desktop.meminfo = "MemTotal: 65536000 kB\nMemAvailable: 60000000 kB\n";
  desktop.amd_cards = {{0, "25769803776\n", "33554432000\n"}, {1, "536870912\n", "33554432000\n"}};
  const Detected d = detect_from(desktop);
  ASSERT_EQ(d.box.gpus.size(), 1u);
  EXPECT_EQ(d.box.gpus[0].name, "AMD GPU card0");
  EXPECT_EQ(d.box.gpus[0].memory_bytes, 24 * kGiB);
  EXPECT_FALSE(d.box.gpus[0].share);
  MachineProbes nvidia = strix_halo(63968);
  nvidia.nvidia_smi = "NVIDIA GeForce RTX 4090, 24564\n";
  EXPECT_EQ(detect_from(nvidia).box.gpus.at(0).id, "rtx-4090");
  MachineProbes none;
  none.meminfo = "MemTotal: 1000 kB\n";
  EXPECT_TRUE(detect_from(none).box.gpus.empty());
}

// The runner keeps at most the bytes asked for from a program that never stops writing, returns
// from one that never writes once the time is up, and gives nothing for a missing program.
TEST(Detect, ProbesAreBoundedInOutputAndTime) {
  EXPECT_EQ(run_bounded({"yes"}, std::chrono::milliseconds(10000), 1000).size(), 1000u);
  EXPECT_EQ(run_bounded({"sleep", "30"}, std::chrono::milliseconds(100), 1000), "");
  EXPECT_EQ(run_bounded({"vramcalc-no-such-probe"}, std::chrono::milliseconds(1000), 1000), "");
  EXPECT_EQ(run_bounded({"echo", "GB10"}, std::chrono::milliseconds(10000), 1000), "GB10\n");
}
