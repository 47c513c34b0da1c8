#pragma once
// The llama.cpp measurements in tests/data/llamacpp-measured.json (written by
// tools/measure-llamacpp/measure.mjs): tiny models rebuilt from their stored GGUF metadata and
// tensor list, and every case's settings with the bytes llama.cpp allocated. Each case and model
// carries `set_aside`, fixed by a hash of its id before any rule was fitted.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engines/llamacpp_cuda_buffers.h"
#include "engines/llamacpp_profile.h"
#include "model/model.h"
#include "sources/gguf/gguf_file.h"

namespace vc {

struct MeasuredLlamaCppModel {
  std::string name;
  bool set_aside = false;
  GgufFile header;  // the stored metadata and tensor list, laid out as the writer lays them out
  Model model;      // read from `header`
  uint64_t mapped_bytes = 0;  // CPU_Mapped model buffer
  uint64_t repack_bytes = 0;  // CPU_REPACK model buffer
  std::optional<uint64_t> peer_estimate;  // node-llama-cpp's model estimate (no repack)
};

struct MeasuredLlamaCppCase {
  std::string id;
  std::string model;
  bool set_aside = false;
  LlamaCppSettings settings;
  bool created = false;              // false: llama.cpp refused the context (errors says why)
  std::vector<std::string> errors;
  uint64_t n_ctx = 0, n_ctx_seq = 0;
  uint64_t context_bytes = 0;        // KV cache + recurrent state
  uint64_t compute_bytes = 0;        // scheduler compute buffer
  std::optional<uint64_t> peer_estimate;  // node-llama-cpp's context estimate (context + compute)
  // The per-buffer format (tests/data/llamacpp-cuda-measured.json, a CUDA build): -ngl, -ot and
  // what llama_get_memory_breakdown() gave per buffer type ("CUDA0", "CUDA_Host", "CPU_Mapped", "CPU").
  uint64_t n_gpu_layers = 0;
  std::string override_tensor;  // the -ot value ("exps=CPU"), empty: none
  std::map<std::string, LlamaCppBufferBytes> buffers;
};

struct MeasuredLlamaCpp {
  std::string version;  // llama.cpp release and commit
  bool per_buffer = false;  // cases carry `buffers` (a CUDA build) instead of context/compute totals
  std::vector<MeasuredLlamaCppModel> models;
  std::vector<MeasuredLlamaCppCase> cases;
  const MeasuredLlamaCppModel* find(const std::string& name) const;
};

// Throws InputError naming the file for anything it cannot read. A per-buffer file names its
// models only; their metadata and tensors are read from llamacpp-measured.json beside it.
MeasuredLlamaCpp read_llamacpp_measured(const std::string& path);

}  // namespace vc
