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
#include "probe_settings.h"

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
void apply_case(llama_context_params& p) {
  const char* spec = std::getenv("VC_CASE");
  if (spec) probe::apply_case(spec, p);
}

void write_line(const std::string& line) { probe::append_line(std::getenv("VC_OUT"), line); }

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
