#include "cli/hub_ladder.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/units.h"
#include "estimate/ladder.h"
#include "report/json_verbs.h"
#include "sources/remote/hub_builds.h"
#include "sources/resolver.h"

namespace vc::cli {

bool names_hub_repository(const std::string& spec) {
  if (spec.rfind("hf:", 0) != 0) return false;
  const HubSpec hub = parse_hf_spec(spec, "MODEL");
  return hub.file.empty() && hub.tag.empty();
}

int print_hub_ladder(const std::string& spec, uint32_t overhead_bp, const std::string& overhead_text, bool json) {
  const HubSpec hub = parse_hf_spec(spec, "MODEL");
  const HubListing listing = list_hub_repository(hub, "MODEL");
  const HubLayout layout = lay_out_hub_files(listing.files);
  // The geometry (for bits per parameter) from one build's header: the default pick, else the
  // smallest complete build; a safetensors repository reads as usual.
  std::string model_spec = spec;
  for (const auto& b : layout.builds) {
    if (!b.complete()) continue;
    model_spec = "hf:" + hub.repo_id() + "@" + hub.revision + "/" + b.files.front();
    break;
  }
  try {
    model_spec = "hf:" + hub.repo_id() + "@" + hub.revision + "/" + pick_hub_build(layout, "", "MODEL").files.front();
  } catch (const InputError&) {
    // no default build: keep the smallest
  }
  Model model = resolve_model(model_spec);
  model.id = "hf:" + hub.repo_id();
  model.builds.clear();
  for (const auto& b : layout.builds) {
    Build out;
    out.name = b.tag;
    out.format = "GGUF";
    out.bytes = b.bytes;
    out.source = hf_endpoint() + "/" + hub.repo_id() + "/resolve/" + hub.revision + "/" + b.files.front();
    out.note = fmt::format("{} of {} part{}{}", b.files.size(), b.parts_expected, b.parts_expected == 1 ? "" : "s", b.complete() ? "" : " (incomplete)");
    model.builds.push_back(out);
  }
  const auto rows = build_ladder(model, overhead_bp);
  if (json) {
    nlohmann::json j = builds_json(model, rows);
    j["repository"] = {{"id", listing.repo_id}, {"revision", listing.revision}, {"commit", listing.commit}, {"last_modified", listing.last_modified},
                       {"read_at", listing.read_at}, {"listing_url", listing.api_url}, {"files", listing.files.size()}};
    nlohmann::json mm = nlohmann::json::array();
    for (const auto& f : layout.mmproj) mm.push_back({{"path", f.path}, {"bytes", f.bytes}});
    j["mmproj"] = mm;
    for (size_t i = 0; i < rows.size(); ++i) j["builds"][i]["parts"] = rows[i].build->note;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("hf:{} at {} (commit {}), listed {} from {}\n", listing.repo_id, listing.revision, listing.commit.substr(0, 12), listing.read_at, listing.api_url);
  if (rows.empty()) {
    fmt::print("No GGUF builds; the repository's weights are {} ({} safetensors files).\n", format_bytes(model.native.bytes, ByteUnits::Decimal, 2),
               layout.safetensors.size());
    return 0;
  }
  fmt::print("{:<14} {:>12} {:>6} {:>16} {:>12}  {}\n", "build", "size", "bits", "with " + overhead_text, "parts", "cards");
  for (const auto& r : rows) {
    std::string cards;
    for (const auto& op : r.options) cards += fmt::format("{}{} × {}", cards.empty() ? "" : ", ", op.cards, op.label);
    fmt::print("{:<14} {:>12} {:>6.2f} {:>16} {:>12}  {}\n", r.build->name, format_bytes(r.build->bytes, ByteUnits::Decimal, 2), r.bits_per_param,
               format_bytes(r.with_overhead, ByteUnits::Decimal, 2), r.build->note, cards);
  }
  for (const auto& f : layout.mmproj) fmt::print("mmproj: {} ({})\n", f.path, format_bytes(f.bytes, ByteUnits::Decimal, 2));
  fmt::print("Bits per parameter use {} parameters read from {}.\n", format_count(model.params.total()), model_spec);
  return 0;
}

}  // namespace vc::cli
