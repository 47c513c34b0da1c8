#pragma once
// The CLI face of an Inputs struct's fields (core/input_fields.h): one --NAME option per field.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/input_fields.h"

namespace vc::cli {

// Adds --NAME (and its alias) for every field but those named in `skip`.
template <class Inputs>
void add_input_options(CLI::App& app, Inputs& inputs, const std::vector<InputField<Inputs>>& fields, const std::vector<std::string>& skip = {}) {
  for (const auto& f : fields) {
    bool skipped = false;
    for (const auto& s : skip) skipped = skipped || s == f.name;
    if (skipped) continue;
    const std::string names = "--" + std::string(f.name) + (*f.alias ? std::string(",") + f.alias : std::string());
    auto* option = app.add_option(names, inputs.*(f.member), f.help);
    if (f.show_default) option->capture_default_str();
  }
}

}  // namespace vc::cli
