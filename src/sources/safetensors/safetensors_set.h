#pragma once
// The shards of a safetensors checkpoint: the files model.safetensors.index.json maps to, or
// a single file. Locations are paths or URLs; `base` + "/" + name addresses each shard.
#include <string>
#include <cstddef>
#include <vector>

#include "sources/io/opener.h"
#include "sources/safetensors/safetensors_file.h"

namespace vc {

struct SafetensorsSet {
  std::vector<SafetensorsFile> files;
  uint64_t bytes_fetched = 0;
};

// The distinct shard file names of an index's weight_map, in first-seen order. Bounded: at most
// 100,000 entries; names must be plain file names (no '/' or '..').
std::vector<std::string> safetensors_index_files(const std::string& index_text, const std::string& label);

// InputError naming the shard that cannot be read.
SafetensorsSet read_safetensors_set(const std::vector<std::string>& locations, const Opener& open, std::size_t concurrency = 1);

}  // namespace vc
