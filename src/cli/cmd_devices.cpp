// vramcalc devices: the accelerators the planner knows, each with its vendor source.
#include <fmt/format.h>

#include "cli/commands.h"
#include "core/units.h"
#include "plan/hardware.h"
#include "report/json_plan.h"

namespace vc::cli {

Command add_devices(CLI::App& app) {
  auto* sub = app.add_subcommand("devices", "List the known GPUs and accelerators with memory, bandwidth, compute and source");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON");
  return {sub, [json] {
            const auto& all = DeviceTable::builtin().all();
            if (*json) {
              fmt::print("{}\n", devices_json(all).dump(2));
              return 0;
            }
            fmt::print("{:<18} {:<40} {:>10} {:>9} {:>8} {:>8} {:>8}  {}\n", "id", "name", "memory", "GB/s", "BF16 TF", "FP8 TF", "FP4 TF", "source");
            for (const auto& d : all) {
              auto tf = [](double v) { return v > 0 ? fmt::format("{:.0f}", v) : std::string("-"); };
              fmt::print("{:<18} {:<40} {:>10} {:>9} {:>8} {:>8} {:>8}  {}\n", d.id, d.name, format_bytes(d.memory_bytes, ByteUnits::Decimal, 1),
                         format_grouped(static_cast<double>(d.bandwidth) / 1e9, 0), tf(d.bf16_tflops), tf(d.fp8_tflops), tf(d.fp4_tflops), d.source);
            }
            fmt::print("{} devices. Memory in decimal GB; consumer cards are GiB-sized (24 GiB = 25.8 GB). TFLOPS dense.\n", all.size());
            // Unified memory: the memory column is the whole machine's; plans use the GPU's share.
            fmt::print("Unified memory: a plan counts the share the OS lets the GPU hold (--gpu-wired-limit raises it):\n");
            for (const auto& d : all) {
              if (!d.gpu_share_rule.empty()) fmt::print("  {:<18} GPU share {}\n", d.id, os_gpu_share(d).formula);
            }
            return 0;
          }};
}

}  // namespace vc::cli
