#include "sources/gguf/gguf_set.h"

#include "core/error.h"
#include "sources/concurrent_reads.h"
#include "sources/gguf/gguf_split.h"

namespace vc {

GgufSet read_gguf_set(const std::string& location, const Opener& open, std::size_t concurrency) {
  struct Part {
    GgufFile file;
    uint64_t fetched = 0;
  };
  const auto names = gguf_split_names(location);
  auto parts = read_concurrently<Part>(names.size(), concurrency, [&](std::size_t i) {
    std::unique_ptr<ByteSource> src;
    try {
      src = open(names[i]);
    } catch (const InputError& e) {
      if (names.size() == 1) throw;
      throw InputError(names[i], "split part " + std::to_string(i + 1) + " of " + std::to_string(names.size()) +
                                     " cannot be read (" + e.what() + "); every file of the set is needed");
    }
    Part p{read_gguf(*src), 0};
    p.fetched = src->bytes_fetched();
    return p;
  });
  GgufSet set;
  for (auto& p : parts) {
    set.files.push_back(std::move(p.file));
    set.bytes_fetched += p.fetched;
  }
  return set;
}

}  // namespace vc
