#pragma once
// Split GGUF sets (llama.cpp gguf-split): NAME-00001-of-00003.gguf ... -00003-of-00003.gguf.
// Works on paths and URLs alike: only the file-name suffix is rewritten.
#include <string>
#include <vector>

namespace vc {

// Every member's name, in order, given any one of them; {name} when it is not a split name.
// Set sizes above 9,999 are refused (InputError) rather than listed.
std::vector<std::string> gguf_split_names(const std::string& name);

}  // namespace vc
