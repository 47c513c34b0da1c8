// SGLang as an engine (wired to src/engines/sglang_profile.h when it lands).
#include "core/error.h"
#include "engines/engine_impl.h"

namespace vc::engines {

EngineAnswer sglang(const EngineRequest&, const EngineRun&) {
  throw InputError("--engine", "sglang is not modelled in this build yet; accepted: rule, llamacpp, vllm");
}

}  // namespace vc::engines
