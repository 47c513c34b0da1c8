#pragma once
// What a MODEL source holds, read from headers only: a GGUF (or split set), safetensors shards
// (with the config.json beside them), a config.json alone, local or remote. `inspect` shows it;
// resolve_model takes its Model.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.h"
#include "sources/tensor_tally.h"

namespace vc {

struct CheckpointInspection {
  std::string kind;                // "GGUF v3", "safetensors", "config.json"
  std::vector<std::string> files;  // every file read
  uint64_t file_bytes = 0;         // total size of the checkpoint files
  uint64_t bytes_fetched = 0;      // header bytes actually read
  TensorTally tally;               // empty for a config.json alone
  std::vector<std::pair<std::string, std::string>> metadata;  // selected GGUF keys / __metadata__
  std::optional<Model> model;      // absent when the geometry cannot be known (why: no_model)
  std::string no_model;
};

// `spec` is a path (file or directory), an http(s):// URL or hf:ORG/REPO[@REV][/FILE].
// InputError(subject, ...) when it is none of those or cannot be read.
CheckpointInspection inspect_checkpoint(const std::string& spec, const std::string& subject = "MODEL");

// True when `spec` names something other than a catalogue entry (path, URL, hf:).
bool looks_like_location(const std::string& spec);

}  // namespace vc
