#include "sources/gguf/gguf_set.h"

#include "core/error.h"
#include "sources/gguf/gguf_split.h"

namespace vc {

GgufSet read_gguf_set(const std::string& location, const Opener& open) {
  GgufSet set;
  const auto names = gguf_split_names(location);
  for (size_t i = 0; i < names.size(); ++i) {
    std::unique_ptr<ByteSource> src;
    try {
      src = open(names[i]);
    } catch (const InputError& e) {
      if (names.size() == 1) throw;
      throw InputError(names[i], "split part " + std::to_string(i + 1) + " of " + std::to_string(names.size()) +
                                     " cannot be read (" + e.what() + "); every file of the set is needed");
    }
    set.files.push_back(read_gguf(*src));
    set.bytes_fetched += src->bytes_fetched();
  }
  return set;
}

}  // namespace vc
