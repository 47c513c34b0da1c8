#pragma once
// Opens a location (a path or a URL) as a ByteSource; the resolver picks local or remote.
#include <functional>
#include <memory>
#include <string>

#include "sources/io/byte_source.h"

namespace vc {

using Opener = std::function<std::unique_ptr<ByteSource>(const std::string& location)>;

}  // namespace vc
