#pragma once
// vLLM's rank check on the adapters it loads at start (`--lora-modules NAME=PATH` or the JSON
// {"name": ..., "path": ..., "base_model_name": ...}; vllm/entrypoints/openai/cli_args.py
// LoRAParserAction). Each adapter's adapter_config.json is read (vllm/lora/peft_helper.py
// PEFTHelper.from_local_dir) and refused when its rank exceeds --max-lora-rank: PEFTHelper.validate_legal
// raises "LoRA rank {r} is greater than max_lora_rank {max_lora_rank}." for `r`, and a module whose
// rank_pattern rank exceeds it cannot be copied into its slot (vllm/lora/layers/base_linear.py
// set_lora: lora_a_stacked[index, 0, :rank, :] holds max_lora_rank rows), so the adapter's largest
// rank is what must fit. vLLM reads the path as a folder, or downloads a Hub repository id.
#include <string>
#include <vector>

#include "engines/sglang_lora_adapters.h"
#include "engines/vllm_lora.h"

namespace vc {

inline constexpr const char* kVllmLoraCheckSource =
    "https://github.com/vllm-project/vllm/blob/main/vllm/lora/peft_helper.py (PEFTHelper.validate_legal)";

// At most this many --lora-modules adapters are read for one command.
inline constexpr std::size_t kMaxVllmAdaptersRead = 64;

// One --lora-modules entry's path: NAME=PATH or JSON {"name": NAME, "path": PATH, ...}. InputError
// naming --lora-modules otherwise (vLLM: "Invalid format for --lora-modules").
std::string vllm_lora_module_entry(const std::string& entry);

// Reads the adapters' adapter_config.json when the slots are on (max_loras > 0), and fills
// adapters_checked / adapters_unread / largest_adapter_rank. InputError naming --max-lora-rank when
// an adapter's largest rank (AdapterConfig::largest_rank) exceeds it, as vLLM refuses to start. An
// adapter whose config cannot be read (or a local path where only remote ones are read) is left
// unchecked and counted.
void read_vllm_lora_adapters(LoraSlotSettings& settings, AdapterReads reads);

// The line for the engine's notes: what the check found (empty without adapters).
std::string vllm_lora_adapters_note(const LoraSlotSettings& settings);

}  // namespace vc
