#include "sources/safetensors/safetensors_set.h"

#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "sources/concurrent_reads.h"

namespace vc {

std::vector<std::string> safetensors_index_files(const std::string& text, const std::string& label) {
  if (json_depth(text) > safetensors_limits::kMaxDepth) throw InputError(label, "nests JSON deeper than 8 levels");
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw InputError(label, "is not a JSON object");
  auto wm = doc.find("weight_map");
  if (wm == doc.end() || !wm->is_object()) throw InputError(label + ": weight_map", "is missing; an index maps each tensor name to its shard file there");
  if (wm->size() > 100000) throw InputError(label + ": weight_map", "has more than 100,000 entries");
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto it = wm->begin(); it != wm->end(); ++it) {
    if (!it.value().is_string()) throw InputError(label + ": weight_map", "maps '" + it.key() + "' to something other than a file name");
    const std::string name = it.value().get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos || name.find('\\') != std::string::npos) {
      throw InputError(label + ": weight_map", "names shard '" + name + "'; only plain file names in the same folder are accepted");
    }
    if (seen.insert(name).second) out.push_back(name);
  }
  if (out.empty()) throw InputError(label + ": weight_map", "is empty");
  return out;
}

SafetensorsSet read_safetensors_set(const std::vector<std::string>& locations, const Opener& open, std::size_t concurrency) {
  SafetensorsSet set;
  set.files = read_set_members<SafetensorsFile>(locations, open, concurrency, [](ByteSource& src) { return read_safetensors(src); }, "shard",
                                                "every shard is needed", set.bytes_fetched);
  return set;
}

}  // namespace vc
