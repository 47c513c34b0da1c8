#pragma once
// JSON parsing for untrusted text that refuses what nlohmann accepts silently: a key given twice in
// one object (nlohmann keeps the last, so a file or request could hide a value behind another).
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace vc {

struct StrictJson {
  nlohmann::json doc;          // discarded when the text is not valid JSON
  std::string duplicate_key;   // the first key found twice in one object, else empty
  bool valid() const { return !doc.is_discarded() && duplicate_key.empty(); }
};

// Never throws for bad text: an invalid document comes back discarded (nlohmann's
// allow_exceptions=false), a duplicate key comes back named.
StrictJson parse_strict_json(std::string_view text);

}  // namespace vc
