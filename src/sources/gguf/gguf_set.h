#pragma once
// Reads a GGUF file or a whole split set given any member's location.
#include <cstddef>
#include <vector>

#include "sources/gguf/gguf_file.h"
#include "sources/io/opener.h"

namespace vc {

struct GgufSet {
  std::vector<GgufFile> files;
  uint64_t bytes_fetched = 0;  // header bytes read across the set
};

// InputError naming the missing member when a split set is incomplete. `concurrency`: how many
// parts are read at once (sources/concurrent_reads.h; remote sets read several).
GgufSet read_gguf_set(const std::string& location, const Opener& open, std::size_t concurrency = 1);

}  // namespace vc
