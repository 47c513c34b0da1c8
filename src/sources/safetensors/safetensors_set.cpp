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
  struct Shard {
    SafetensorsFile file;
    uint64_t fetched = 0;
  };
  auto shards = read_concurrently<Shard>(locations.size(), concurrency, [&](std::size_t i) {
    std::unique_ptr<ByteSource> src;
    try {
      src = open(locations[i]);
    } catch (const InputError& e) {
      if (locations.size() == 1) throw;
      throw InputError(locations[i], "shard " + std::to_string(i + 1) + " of " + std::to_string(locations.size()) + " cannot be read (" + e.what() +
                                         "); every shard is needed");
    }
    Shard s{read_safetensors(*src), 0};
    s.fetched = src->bytes_fetched();
    return s;
  });
  SafetensorsSet set;
  for (auto& s : shards) {
    set.files.push_back(std::move(s.file));
    set.bytes_fetched += s.fetched;
  }
  return set;
}

}  // namespace vc
