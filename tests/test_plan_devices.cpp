// The device table (data/devices.json), box parsing, machine detection parsers, and the plan,
// check and devices commands end to end.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/error.h"
#include "plan/detect.h"
#include "plan/hardware.h"
#include "plan/plan.h"
#include "catalogue/catalogue.h"

using namespace vc;

namespace {

struct CliRun {
  int code = 0;
  std::string out;
};

CliRun run_cli(const std::string& args) {
  const std::string cmd = std::string(VRAMCALC_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  CliRun r;
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST(PlanDevices, EveryEntryHasASourceAndFigures) {
  const auto& all = DeviceTable::builtin().all();
  EXPECT_GE(all.size(), 40u);
  std::set<std::string> ids;
  for (const auto& d : all) {
    EXPECT_TRUE(ids.insert(d.id).second) << "duplicate id " << d.id;
    EXPECT_EQ(d.source.rfind("https://", 0), 0u) << d.id << " has no vendor URL";
    EXPECT_FALSE(d.memory_units.empty()) << d.id;
    EXPECT_GT(d.memory_bytes, 0u) << d.id;
    EXPECT_GT(d.bandwidth, 0u) << d.id;
    EXPECT_GT(d.bf16_tflops, 0.0) << d.id;
    EXPECT_FALSE(d.engines.empty()) << d.id;
  }
}

TEST(PlanDevices, VendorFiguresAsPublished) {
  const auto& t = DeviceTable::builtin();
  // NVIDIA H200 page: 141 GB HBM3e at 4.8 TB/s (decimal, as the seeds count 13 x 141 = 1,833 GB).
  EXPECT_EQ(t.find("H200", "--gpu").memory_bytes, 141'000'000'000u);
  EXPECT_EQ(t.find("H200", "--gpu").bandwidth, 4'800'000'000'000u);
  // GeForce RTX 4090: 24 GB GDDR6X, GiB-sized parts = 25,769,803,776 B; 1,008 GB/s.
  EXPECT_EQ(t.find("RTX 4090", "--gpu").memory_bytes, 25'769'803'776u);
  EXPECT_EQ(t.find("4090", "--gpu").bandwidth, 1'008'000'000'000u);
  // AMD MI300X: 192 GB HBM3 at 5.3 TB/s.
  EXPECT_EQ(t.find("mi300x", "--gpu").memory_bytes, 192'000'000'000u);
  EXPECT_EQ(t.find("MI300X", "--gpu").bandwidth, 5'300'000'000'000u);
}

// How GPUs are joined, as the vendor pages say: H200 boards (HGX) join every GPU by NVSwitch; L4 is
// PCIe only; RTX 3090 and H100 PCIe take NVLink bridges for pairs; MI300X boards use Infinity Fabric.
TEST(PlanDevices, GpuLinksAsPublished) {
  const auto& t = DeviceTable::builtin();
  EXPECT_EQ(t.find("H200", "--gpu").gpu_link, GpuLink::FullMesh);
  EXPECT_EQ(t.find("L4", "--gpu").gpu_link, GpuLink::Pcie);
  EXPECT_EQ(t.find("RTX 3090", "--gpu").gpu_link, GpuLink::NvlinkPairs);
  EXPECT_EQ(t.find("h100-pcie", "--gpu").gpu_link, GpuLink::NvlinkPairs);
  EXPECT_EQ(t.find("mi300x", "--gpu").gpu_link, GpuLink::FullMesh);
  EXPECT_EQ(t.find("m4-max-128gb", "--gpu").gpu_link, GpuLink::Unknown);
  EXPECT_THROW(parse_gpu_link("nvlink", "gpu_link"), InputError);
}

TEST(PlanDevices, BoxesParseTheWaysPeopleWriteThem) {
  EXPECT_EQ(parse_gpus("H200x8", "--gpu").size(), 8u);
  EXPECT_EQ(parse_gpus("8xH200", "--gpu").size(), 8u);
  EXPECT_EQ(parse_gpus("H200 x 8", "--gpu").size(), 8u);
  const auto mixed = parse_gpus("3090,3080Ti", "--gpu");
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_EQ(mixed[0].id, "rtx-3090");
  EXPECT_EQ(mixed[1].id, "rtx-3080-ti");
  EXPECT_EQ(parse_gpus("RTX 4090", "--gpu").at(0).id, "rtx-4090");
  EXPECT_EQ(parse_gpus("RTX5090", "--gpu").at(0).id, "rtx-5090");  // not "RT" x 5090
  EXPECT_EQ(parse_gpus("mi300xx8", "--gpu").size(), 8u);
  EXPECT_TRUE(parse_gpus("none", "--gpu").empty());
  for (const char* bad : {"H100", "Z9000", "H200x0", "H200x999", "3090,,3080"}) {
    try {
      parse_gpus(bad, "--gpu");
      FAIL() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.subject(), "--gpu") << bad;
    }
  }
}

TEST(PlanDevices, DetectionParsesDriverOutput) {
  std::vector<std::string> found;
  // nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits, memory in MiB.
  const auto gpus = parse_nvidia_smi("NVIDIA H200, 143771\nNVIDIA GeForce RTX 4090, 24564\ngarbage\n", found);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].bandwidth, 4'800'000'000'000u);           // matched to h200
  EXPECT_EQ(gpus[0].memory_bytes, 143771ull * 1048576);        // what the driver reports
  EXPECT_EQ(gpus[1].name, "GeForce RTX 4090");
  EXPECT_EQ(found.size(), 2u);
  EXPECT_EQ(parse_meminfo("MemTotal:       65536000 kB\nMemFree: 1 kB\nMemAvailable:   60000000 kB\n"), 60000000ull * 1024);
  EXPECT_EQ(parse_meminfo("MemTotal:       1000 kB\n"), 1024000u);
}

TEST(PlanCli, DevicesListsEveryEntry) {
  const CliRun r = run_cli("devices --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.size(), DeviceTable::builtin().all().size());
  for (const auto& d : j) {
    EXPECT_FALSE(d["source"].get<std::string>().empty());
  }
}

TEST(PlanCli, PlanJsonNamesTheBusiestShard) {
  const CliRun r = run_cli("plan kimi-k3 --gpu H200x13 --context 1M --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "vramcalc.plan/2");
  EXPECT_TRUE(j["aggregate_fits"].get<bool>());
  EXPECT_FALSE(j["fits_on_devices"].get<bool>());
  EXPECT_EQ(j["devices"].size(), 13u);
  EXPECT_FALSE(j["devices"][j["busiest"].get<std::size_t>()]["fits"].get<bool>());
  EXPECT_GE(j["commands"].size(), 3u);
}

TEST(PlanCli, BadHardwareExitsTwo) {
  CliRun r = run_cli("plan kimi-k3 --gpu H999");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--gpu"), std::string::npos) << r.out;
  r = run_cli("plan kimi-k3 --gpu H200 --split zz");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--split"), std::string::npos) << r.out;
}

TEST(PlanCli, CheckRanksTheCatalogue) {
  const CliRun r = run_cli("check --gpu 'RTX 4090' --ram 768GB --ram-gbps 80 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["rows"].empty());
  for (const auto& row : j["rows"]) {
    // A 24 GB card cannot hold a 2.8T model: the best it does is offload to the 768 GB of RAM.
    if (row["model"] == "kimi-k3") {
      EXPECT_EQ(row["fit"], "offload");
      EXPECT_GT(row["max_context"].get<uint64_t>(), 0u);
    }
  }
}

TEST(PlanDevices, UnknownDetectedCardStillPlansWithoutASpeed) {
  std::vector<std::string> found;
  Box box;
  box.gpus = parse_nvidia_smi("Mystery Accelerator 9000, 16384\n", found);  // 16 GiB, not in the table
  ASSERT_EQ(box.gpus.size(), 1u);
  EXPECT_EQ(box.gpus[0].bandwidth, 0u);
  box.ram_bytes = 768'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  Scenario s;
  s.quant = "UD-IQ1_S";
  const Plan p = make_plan(*Catalogue::builtin().find("kimi-k3"), s, box, PlanOptions{});
  ASSERT_TRUE(p.offload);
  EXPECT_TRUE(p.offload->fits);
  EXPECT_TRUE(p.offload->speed_unknown);
  EXPECT_EQ(p.decode.upper_tok_s, 0.0);
}
