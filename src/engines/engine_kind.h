#pragma once
// Which engine an answer is for. `rule` is the percentage rule (15% over weights and cache), the
// default; the others model what that engine allocates (docs/engines.md).
#include <string>

namespace vc {

enum class EngineKind { Rule, LlamaCpp, Vllm, Sglang };

const char* to_string(EngineKind kind);  // "rule", "llamacpp", "vllm", "sglang"
// Accepts rule (also "generic", its former name), llamacpp (llama.cpp), vllm, sglang; InputError(subject) otherwise.
EngineKind parse_engine(const std::string& text, const std::string& subject);
inline constexpr const char* kEngineNames = "rule (the default: 15% over weights and cache), llamacpp, vllm, sglang";

}  // namespace vc
