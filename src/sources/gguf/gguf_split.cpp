#include "sources/gguf/gguf_split.h"

#include <fmt/format.h>

#include <regex>

#include "core/error.h"

namespace vc {

std::vector<std::string> gguf_split_names(const std::string& name) {
  static const std::regex pattern(R"(^(.*)-(\d{5})-of-(\d{5})\.gguf$)");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return {name};
  const unsigned long index = std::stoul(m[2].str());
  const unsigned long count = std::stoul(m[3].str());
  if (count == 0 || index == 0 || index > count) throw InputError(name, "split name says part " + m[2].str() + " of " + m[3].str() + "; parts run 1 to N");
  if (count > 9999) throw InputError(name, "split set of " + m[3].str() + " files; at most 9,999 are accepted");
  std::vector<std::string> out;
  for (unsigned long i = 1; i <= count; ++i) out.push_back(fmt::format("{}-{:05}-of-{:05}.gguf", m[1].str(), i, count));
  return out;
}

}  // namespace vc
