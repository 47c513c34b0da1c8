#include "sources/gguf/gguf_set.h"

#include "sources/concurrent_reads.h"
#include "sources/gguf/gguf_split.h"

namespace vc {

GgufSet read_gguf_set(const std::string& location, const Opener& open, std::size_t concurrency) {
  GgufSet set;
  set.files = read_set_members<GgufFile>(gguf_split_names(location), open, concurrency, [](ByteSource& src) { return read_gguf(src); },
                                         "split part", "every file of the set is needed", set.bytes_fetched);
  return set;
}

}  // namespace vc
