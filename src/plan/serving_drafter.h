#pragma once
// A pasted vLLM or SGLang command's speculative decoding in plan's engine answer, as `estimate`
// counts it: MTP and n-gram need nothing beyond the command; a draft model or EAGLE head is the
// catalogue's model of that id, name or Hugging Face repository. One the catalogue does not hold
// stays out of the answer (the engines' note says so), since plan reads no file or URL a command
// names. The command plan prints then passes the same speculative flags.
#include <string>

#include "engines/engine.h"

namespace vc {

// Sets request.companions (speculative, and the draft model) from request.command; no change when
// the command has no speculative decoding, or names a draft model the catalogue does not hold.
void attach_serving_drafter(EngineRequest& request);

// The speculative flags of `run` in its engine's own spelling, for the printed command: vLLM's
// --speculative-config JSON, SGLang's --speculative-algorithm and its settings ("" without one).
std::string serving_speculative_flags(const EngineRun& run);

}  // namespace vc
