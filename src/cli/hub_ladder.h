#pragma once
// `vramcalc builds hf:ORG/REPO[@REV]`: the repository's live build ladder from the Hub API (each
// GGUF build's exact bytes, split sets summed, the date read), with bits per parameter from one
// build's header and the cards each build needs.
#include <cstdint>
#include <string>

namespace vc::cli {

// True for hf:ORG/REPO[@REV] naming neither a file nor a tag.
bool names_hub_repository(const std::string& spec);

int print_hub_ladder(const std::string& spec, uint32_t overhead_bp, const std::string& overhead_text, bool json);

}  // namespace vc::cli
