// What breakdown_probe.cpp (preloaded into node) and native_probe.cpp (a plain program) share: a
// case's settings, "key=value,key=value", turned into the llama_context_params llama-server would
// pass for `-c C -np S -b B -ub U -fa on|off -ctk K -ctv V [--swa-full]`, and appending a JSON line.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "llama.h"

namespace probe {

// The value of `key` in `spec`; false when the case does not set it (the caller's value stays).
inline bool setting(const std::string& spec, const char* key, long& out) {
  const std::string s = "," + spec + ",";
  const std::string needle = std::string(",") + key + "=";
  const size_t at = s.find(needle);
  if (at == std::string::npos) return false;
  out = std::strtol(s.c_str() + at + needle.size(), nullptr, 10);
  return true;
}

inline void apply_case(const std::string& spec, llama_context_params& p) {
  long v;
  if (setting(spec, "n_ctx", v)) p.n_ctx = static_cast<uint32_t>(v);
  if (setting(spec, "n_batch", v)) p.n_batch = static_cast<uint32_t>(v);
  if (setting(spec, "n_ubatch", v)) p.n_ubatch = static_cast<uint32_t>(v);
  if (setting(spec, "n_seq_max", v)) p.n_seq_max = static_cast<uint32_t>(v);
  if (setting(spec, "flash_attn", v)) p.flash_attn_type = static_cast<llama_flash_attn_type>(v);
  if (setting(spec, "type_k", v)) p.type_k = static_cast<ggml_type>(v);
  if (setting(spec, "type_v", v)) p.type_v = static_cast<ggml_type>(v);
  if (setting(spec, "swa_full", v)) p.swa_full = v != 0;
  if (setting(spec, "kv_unified", v)) p.kv_unified = v != 0;
  if (setting(spec, "n_threads", v)) p.n_threads = p.n_threads_batch = static_cast<int32_t>(v);
  // llama-server's defaults for what the command line above leaves alone (common_context_params_to_llama).
  p.n_rs_seq = 0;
  p.n_outputs_max = 0;
  p.n_outputs_max_per_seq = 0;
  p.embeddings = false;
  p.offload_kqv = true;
  p.op_offload = true;
}

inline void append_line(const char* path, const std::string& line) {
  if (!path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fputs(line.c_str(), f);
    std::fputc('\n', f);
    std::fclose(f);
  }
}

}  // namespace probe
