#pragma once
// One user input of a verb, defined once for both faces: the CLI's `--NAME` flag and the API's
// `NAME` parameter hold the same text in the same Inputs member (whose initial value is the
// default), and the Inputs' own parser bounds it. The CLI adds `alias` and `help`; the server takes
// the names and fills the members, so a flag added here is an API parameter too.
#include <string>
#include <vector>

namespace vc {

template <class Inputs>
struct InputField {
  const char* name;              // "context": the CLI's --context, the API's context
  std::string Inputs::*member;   // where the text goes; its initial value is the default
  std::string help;              // the CLI's --help line
  const char* alias = "";        // the CLI's short form ("-c"), or ""
  bool show_default = true;      // the CLI prints the default in --help
};

template <class Inputs>
std::vector<std::string> input_names(const std::vector<InputField<Inputs>>& fields) {
  std::vector<std::string> names;
  for (const auto& f : fields) names.emplace_back(f.name);
  return names;
}

}  // namespace vc
