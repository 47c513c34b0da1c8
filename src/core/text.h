#pragma once
// Small text helpers shared by the readers, the planner and the server.
#include <cctype>
#include <string>
#include <string_view>

namespace vc {

// `s` with ASCII letters lowered (flag values, model names, Host headers: never locale-dependent).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace vc
