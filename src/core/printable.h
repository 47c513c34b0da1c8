#pragma once
// Text read from a file or a request, made safe to print: control characters (newlines, escape
// sequences, carriage returns that could forge report or log lines) become \n, \x1b style escapes.
// UTF-8 beyond ASCII passes through unchanged.
#include <string>
#include <string_view>

namespace vc {

std::string printable(std::string_view text);

}  // namespace vc
