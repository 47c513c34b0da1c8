#include "core/strict_json.h"

#include <set>
#include <vector>

namespace vc {

StrictJson parse_strict_json(std::string_view text) {
  StrictJson out;
  std::vector<std::set<std::string>> open_objects;  // the keys seen in each object being read
  const auto watch = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::object_start) open_objects.emplace_back();
    else if (event == E::object_end && !open_objects.empty()) open_objects.pop_back();
    else if (event == E::key && !open_objects.empty() && parsed.is_string()) {
      if (!open_objects.back().insert(parsed.get<std::string>()).second && out.duplicate_key.empty()) {
        out.duplicate_key = parsed.get<std::string>().substr(0, 128);
      }
    }
    return true;
  };
  out.doc = nlohmann::json::parse(text, watch, false);
  return out;
}

}  // namespace vc
