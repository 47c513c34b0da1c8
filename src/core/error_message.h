#pragma once
// An InputError's message without its "subject: " prefix, for a face that names the subject its
// own way (the API's bare parameter names, a flag in place of the file it named).
#include <string>

#include "core/error.h"

namespace vc {

inline std::string message_of(const InputError& e) { return std::string(e.what()).substr(e.subject().size() + 2); }

}  // namespace vc
