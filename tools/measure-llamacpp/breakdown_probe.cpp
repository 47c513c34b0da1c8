// Preloaded into node (LD_PRELOAD) while measure.mjs runs. It wraps llama.cpp's
// llama_init_from_model so that every context is created with exactly the settings llama-server
// would pass for `-c C -np S -b B -ub U -fa on|off -ctk K -ctv V [--swa-full]` (read from the
// environment, VC_CASE), whatever node-llama-cpp's own option handling would have made of them, and
// then writes llama_get_memory_breakdown() for the new context in exact bytes, one JSON line to the
// file named by VC_OUT. Compiled by measure.mjs against the headers of the very llama.cpp source
// node-llama-cpp ships (node_modules/node-llama-cpp/llama/gitRelease.bundle), so the parameter
// struct layout is the one the prebuilt library was built with.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "llama-ext.h"
#include "llama.h"

namespace {

// libllama is loaded by node's dlopen(RTLD_LOCAL) of the addon, so RTLD_NEXT cannot see it:
// open it again by path (already loaded, so this only returns its handle).
void* llama_lib() {
  static void* handle = [] {
    const char* path = std::getenv("VC_LIBLLAMA");
    void* h = path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : nullptr;
    if (!h && path) h = dlopen(path, RTLD_LAZY);
    if (!h) std::fprintf(stderr, "breakdown_probe: cannot open VC_LIBLLAMA=%s\n", path ? path : "(unset)");
    return h;
  }();
  return handle;
}

template <typename Fn>
Fn sym(const char* name) {
  void* h = llama_lib();
  return h ? reinterpret_cast<Fn>(dlsym(h, name)) : nullptr;
}

// VC_CASE is "key=value,key=value"; absent keys keep what the caller passed.
bool setting(const char* key, long& out) {
  const char* spec = std::getenv("VC_CASE");
  if (!spec) return false;
  std::string s = std::string(",") + spec + ",";
  std::string needle = std::string(",") + key + "=";
  size_t at = s.find(needle);
  if (at == std::string::npos) return false;
  out = std::strtol(s.c_str() + at + needle.size(), nullptr, 10);
  return true;
}

void apply_case(llama_context_params& p) {
  long v;
  if (setting("n_ctx", v)) p.n_ctx = static_cast<uint32_t>(v);
  if (setting("n_batch", v)) p.n_batch = static_cast<uint32_t>(v);
  if (setting("n_ubatch", v)) p.n_ubatch = static_cast<uint32_t>(v);
  if (setting("n_seq_max", v)) p.n_seq_max = static_cast<uint32_t>(v);
  if (setting("flash_attn", v)) p.flash_attn_type = static_cast<llama_flash_attn_type>(v);
  if (setting("type_k", v)) p.type_k = static_cast<ggml_type>(v);
  if (setting("type_v", v)) p.type_v = static_cast<ggml_type>(v);
  if (setting("swa_full", v)) p.swa_full = v != 0;
  if (setting("kv_unified", v)) p.kv_unified = v != 0;
  if (setting("n_threads", v)) p.n_threads = p.n_threads_batch = static_cast<int32_t>(v);
  // llama-server's defaults for what the command line above leaves alone (common_context_params_to_llama).
  p.n_rs_seq = 0;
  p.n_outputs_max = 0;
  p.n_outputs_max_per_seq = 0;
  p.embeddings = false;
  p.offload_kqv = true;
  p.op_offload = true;
}

void write_line(const std::string& line) {
  const char* path = std::getenv("VC_OUT");
  if (!path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fputs(line.c_str(), f);
    std::fputc('\n', f);
    std::fclose(f);
  }
}

}  // namespace

extern "C" llama_context* llama_init_from_model(llama_model* model, llama_context_params params) {
  using InitFn = llama_context* (*)(llama_model*, llama_context_params);
  static InitFn real = sym<InitFn>("llama_init_from_model");
  if (!real) return nullptr;
  apply_case(params);
  llama_context* ctx = real(model, params);
  if (!ctx) {
    write_line("{\"created\":false}");
    return ctx;
  }
  using BreakdownFn = llama_memory_breakdown (*)(const llama_context*);
  using CountFn = uint32_t (*)(const llama_context*);
  using NameFn = const char* (*)(ggml_backend_buffer_type_t);
  // A C++ function (src/llama-ext.h): look it up by its mangled name.
  auto breakdown = sym<BreakdownFn>("_Z26llama_get_memory_breakdownPK13llama_context");
  auto buft_name = sym<NameFn>("ggml_backend_buft_name");
  std::string line = "{\"created\":true";
  for (const char* name : {"llama_n_ctx", "llama_n_ctx_seq", "llama_n_batch", "llama_n_ubatch", "llama_n_seq_max"}) {
    if (auto fn = sym<CountFn>(name)) line += std::string(",\"") + (name + 6) + "\":" + std::to_string(fn(ctx));
  }
  line += ",\"flash_attn\":" + std::to_string(static_cast<int>(params.flash_attn_type));
  line += ",\"buffers\":{";
  bool first = true;
  if (breakdown && buft_name) {
    for (const auto& [buft, mb] : breakdown(ctx)) {
      line += std::string(first ? "" : ",") + "\"" + buft_name(buft) + "\":{\"model\":" + std::to_string(mb.model) +
              ",\"context\":" + std::to_string(mb.context) + ",\"compute\":" + std::to_string(mb.compute) + "}";
      first = false;
    }
  }
  line += "}}";
  write_line(line);
  return ctx;
}
