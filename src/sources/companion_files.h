#pragma once
// Files loaded beside a model: its multimodal projector (mmproj GGUF) and LoRA adapters. Found in
// the same folder or Hub repository, read from headers only like the model itself.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sources/gguf/gguf_file.h"

namespace vc {

// The mmproj beside MODEL (hf:ORG/REPO[...]: from the Hub listing; a local file or folder: its
// folder's *mmproj*.gguf, F16 preferred). InputError(subject) when there is none or MODEL is a
// plain URL, whose folder cannot be listed.
std::string find_mmproj_beside(const std::string& model_spec, const std::string& subject);

// The header of one GGUF named by a path, URL or hf: spec.
GgufFile read_gguf_header(const std::string& spec, const std::string& subject);

// The tensor bytes of an adapter file (GGUF or safetensors).
struct AdapterFile {
  std::string file;
  std::string format;  // "GGUF", "safetensors"
  uint64_t tensors = 0;
  uint64_t bytes = 0;
};
AdapterFile read_adapter(const std::string& spec, const std::string& subject);

// A PEFT adapter's adapter_config.json (the adapter's folder or Hub repository, or the folder of
// the adapter file named): its rank `r`, `rank_pattern` and `target_modules`, as engines read them
// before loading the weights (SGLang's lora/lora_config.py LoRAConfig, vLLM's lora/peft_helper.py
// PEFTHelper). Errors are in our words: nothing read is repeated, so the server may pass them on.
struct AdapterConfig {
  std::string file;                          // the adapter_config.json read
  uint64_t rank = 0;                         // r
  // PEFT's per-module overrides of r (peft/tuners/lora/config.py LoraConfig.rank_pattern), in the
  // file's order: a key is a module name or a regular expression (PEFT's matching rule below).
  // `alpha_pattern` overrides lora_alpha, a scale only: no bearing on memory, not read.
  std::vector<std::pair<std::string, uint64_t>> rank_pattern;
  std::vector<std::string> target_modules;   // the list as written
  bool target_modules_shorthand = false;     // a string ("all-linear") in place of the list

  // The largest rank any module of the adapter can have: max(r, every rank_pattern value), PEFT's
  // own bound (peft/tuners/lora/model.py add_weighted_adapter: "the maximum possible rank").
  // The keys are not matched against the base model's module names (PEFT's get_pattern_key needs
  // them): a key that names no module of the model still counts, so the bound is never below a
  // module's real rank, and at worst above it.
  uint64_t largest_rank() const;
};
AdapterConfig read_adapter_config(const std::string& spec, const std::string& subject);

}  // namespace vc
