// vramcalc stream MODEL --gbps 5,19: decode tok/s when the active weights stream from RAM or SSD.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/units.h"
#include "estimate/estimate.h"
#include "estimate/streaming.h"
#include "report/json_verbs.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_stream(CLI::App& app) {
  auto* sub = app.add_subcommand("stream", "Upper bound on decode tok/s when the active weights stream from a slower tier");
  struct Opts {
    std::string model;
    std::string quant;
    std::string bpw;
    std::vector<std::string> gbps{"5", "19"};
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id or config.json")->required();
  sub->add_option("--quant,-q", o->quant, "Take bits per weight from this tier or build (default: native)");
  sub->add_option("--bpw", o->bpw, "Bits per weight of the streamed weights, e.g. 1.7 (overrides --quant)");
  sub->add_option("--gbps", o->gbps, "Read bandwidths in GB/s, e.g. 5,19")->delimiter(',');
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            Model model = resolve_model(o->model);
            std::optional<uint64_t> bits_milli;
            if (!o->bpw.empty()) bits_milli = parse_fixed(o->bpw, "--bpw", 3, 64000, "bits per weight such as 1.7 or 4.25, above 0 and at most 64");
            std::vector<uint64_t> bws;
            for (const auto& g : o->gbps) bws.push_back(parse_bytes(g + "GB", "--gbps"));
            StreamEstimate s = stream_for(model, o->quant, bits_milli, bws);
            if (o->json) {
              fmt::print("{}\n", stream_json(model, s).dump(2));
              return 0;
            }
            fmt::print("{}: {} active params × {:.3g} bits / 8 = {} read per token{}\n", model.name, format_params(s.active_params), s.bits_per_weight,
                       format_bytes(s.bytes_per_token),
                       o->bpw.empty() && (o->quant.empty() || o->quant == "native") && !model.native.bytes_by_class.empty()
                           ? " (native checkpoint: each class at its own precision, k of n routed experts)"
                           : "");
            for (const auto& r : s.rates) {
              fmt::print("  from {:>6.1f} GB/s: {:.2f} tok/s\n", static_cast<double>(r.bandwidth_bytes_per_s) / 1e9, r.tokens_per_s);
            }
            fmt::print("Arithmetic, not a measurement: a hot-expert cache in VRAM or RAM raises it (see `plan`).\n");
            return 0;
          }};
}

}  // namespace vc::cli
