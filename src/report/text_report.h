#pragma once
// Plain-text tables for the terminal. Only formats what the library computed.
#include <string>

#include "core/units.h"
#include "estimate/estimate.h"

namespace vc {

std::string estimate_text(const Estimate& e, bool explain, ByteUnits units);

}  // namespace vc
