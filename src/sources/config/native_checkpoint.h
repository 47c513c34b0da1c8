#pragma once
// The native checkpoint's format and size derived from config.json: dtype for unquantized tensors,
// quantization_config for the rest (which parameter classes it covers, at what bits per weight).
// A measured size from the real files (catalogue facts, safetensors headers) replaces it.
#include "sources/config/config_view.h"

namespace vc {

void apply_native_checkpoint(ConfigView& cfg);

// A tied output head the checkpoint saves again as lm_head.weight (cfg.stored().tied_head_copy):
// the download holds it (Params::stored_copies, Checkpoint::copy_bytes, at the embedding's dtype);
// engines load one matrix (vLLM skips lm_head.* when tie_word_embeddings), so derived_total and
// native bytes leave it out. Fails when the config's head is not tied.
void apply_tied_head_copy(ConfigView& cfg);

}  // namespace vc
