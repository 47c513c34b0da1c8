#include "cli/box_flags.h"

#include "cli/input_options.h"

namespace vc::cli {

void BoxFlags::add_to(CLI::App& app, bool with_split) {
  add_input_options<BoxInputs>(app, *this, fields(), with_split ? std::vector<std::string>{} : std::vector<std::string>{"split"});
}

}  // namespace vc::cli
