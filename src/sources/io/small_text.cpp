#include "sources/io/small_text.h"

#include "core/error.h"

namespace vc {

std::string read_small_text(const std::string& location, const Opener& open, uint64_t max_bytes) {
  auto src = open(location);
  if (src->size() > max_bytes) {
    throw InputError(location, "is " + std::to_string(src->size()) + " bytes; at most " + std::to_string(max_bytes) + " are read for this kind of file");
  }
  std::string text(src->size(), '\0');
  src->read_at(0, text.data(), text.size());
  return text;
}

}  // namespace vc
