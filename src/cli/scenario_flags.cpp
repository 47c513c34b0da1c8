#include "cli/scenario_flags.h"

#include "cli/input_options.h"
#include "core/units.h"

namespace vc::cli {

void ScenarioFlags::add_to(CLI::App& app, bool with_context) {
  add_input_options<ScenarioInputs>(app, *this, fields(), with_context ? std::vector<std::string>{} : std::vector<std::string>{"context"});
  app.add_option("--units", units, "gb (10^9 bytes, default) or gib (2^30)")->capture_default_str();
}

}  // namespace vc::cli
