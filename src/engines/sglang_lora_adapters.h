#pragma once
// What SGLang reads from the --lora-paths adapters before it sizes its LoRA pool: without
// --max-lora-rank, the largest `r` among the adapters' adapter_config.json; without
// --lora-target-modules, the union of their `target_modules`, normalized (LoRAManager.init_lora_shapes
// in python/sglang/srt/lora/lora_manager.py; LoRAConfig in lora/lora_config.py reads
// adapter_config.json from the adapter's folder, or from the Hub when the path is not a folder).
#include <cstdint>
#include <optional>
#include <string>

#include "engines/sglang_lora.h"

namespace vc {

inline constexpr const char* kSglangLoraShapesSource =
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/lora_manager.py (LoRAManager.init_lora_shapes); "
    "https://github.com/sgl-project/sglang/blob/main/python/sglang/srt/lora/lora_config.py (LoRAConfig.get_lora_config)";

// At most this many --lora-paths adapters are read for one command.
inline constexpr std::size_t kMaxSglangAdaptersRead = 64;

// One --lora-paths entry's path: NAME=PATH, PATH, or the JSON {"lora_name": ..., "lora_path": ...,
// "pinned": ...}. InputError naming --lora-paths for a JSON entry without a lora_path string.
std::string sglang_lora_path_entry(const std::string& entry);

// Where the CLI may read (any path) and where the server may (remote only: never a file of its own).
enum class AdapterReads { AnyPath, RemoteOnly };

// The spec vramcalc reads for an adapter path: hf: and http(s):// as written; a local folder (only
// with AnyPath) as written; otherwise a Hub repository id ORG/REPO as hf:ORG/REPO, as SGLang
// downloads a path that is not a folder. Anything else as written.
std::string sglang_adapter_spec(const std::string& path, AdapterReads reads);

// Whether read_sglang_lora_adapters would read anything (the pool is on, adapters are named, and
// the rank or the target modules are left to them).
bool sglang_lora_reads_adapters(const SglangLoraSettings& settings);

// Fills the rank and the target modules the flags leave to the adapters, as SGLang does. Refused
// (InputError): without --max-lora-rank, an adapter whose config cannot be read (naming
// --max-lora-rank); without --lora-target-modules, an adapter naming its modules by a shorthand
// ("all-linear"), which SGLang refuses too (naming --lora-target-modules); with RemoteOnly, a local
// path (naming --lora-paths). With the rank given, an unread config leaves the targets to the
// largest set (every decoder linear module), counted in unread_adapters.
void read_sglang_lora_adapters(SglangLoraSettings& settings, AdapterReads reads);

// The same for a pasted command, when it is SGLang's; for vLLM's, the --lora-modules rank check
// (vllm_lora_adapters.h). Each face calls it once it has the command.
struct EngineRun;
void read_command_lora_adapters(std::optional<EngineRun>& command, AdapterReads reads);

}  // namespace vc
