// Creates one llama.cpp context with llama-server's settings and prints the compute buffer, for
// reading ggml-alloc's trace (README.md, "Reading the allocator's peak"). Build it against a
// llama.cpp checkout of the measured commit whose ggml/src/ggml-alloc.c has GGML_ALLOCATOR_DEBUG
// (and AT_PRINTF) defined; with V=1 the trace goes to stderr.
//
//   alloc_trace MODEL.gguf C NP B UB FA(0|1) CTK CTV SWA_FULL(0|1)
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "llama-ext.h"
#include "llama.h"

namespace {

bool verbose = false;

void log_to_stderr(ggml_log_level level, const char* text, void*) {
  if (verbose || level >= GGML_LOG_LEVEL_WARN) std::fputs(text, stderr);
}

ggml_type cache_type(const char* name) {
  if (!std::strcmp(name, "q8_0")) return GGML_TYPE_Q8_0;
  if (!std::strcmp(name, "q4_0")) return GGML_TYPE_Q4_0;
  return GGML_TYPE_F16;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 10) {
    std::fprintf(stderr, "usage: %s MODEL.gguf C NP B UB FA CTK CTV SWA_FULL\n", argv[0]);
    return 2;
  }
  verbose = std::getenv("V") != nullptr;
  llama_log_set(log_to_stderr, nullptr);
  llama_backend_init();
  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  llama_model* model = llama_model_load_from_file(argv[1], mp);
  if (!model) return 1;
  llama_context_params p = llama_context_default_params();
  p.n_ctx = static_cast<uint32_t>(std::atoi(argv[2]));
  p.n_seq_max = static_cast<uint32_t>(std::atoi(argv[3]));
  p.n_batch = static_cast<uint32_t>(std::atoi(argv[4]));
  p.n_ubatch = static_cast<uint32_t>(std::atoi(argv[5]));
  p.flash_attn_type = std::atoi(argv[6]) ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  p.type_k = cache_type(argv[7]);
  p.type_v = cache_type(argv[8]);
  p.swa_full = std::atoi(argv[9]) != 0;
  // llama-server's defaults for the rest, as breakdown_probe.cpp sets them.
  p.kv_unified = false;
  p.n_threads = p.n_threads_batch = 1;
  p.n_rs_seq = 0;
  p.n_outputs_max = 0;
  p.n_outputs_max_per_seq = 0;
  p.embeddings = false;
  llama_context* ctx = llama_init_from_model(model, p);
  if (!ctx) {
    std::puts("refused");
    return 0;
  }
  for (const auto& [buft, mb] : llama_get_memory_breakdown(ctx)) {
    std::printf("%s model=%zu context=%zu compute=%zu\n", ggml_backend_buft_name(buft), mb.model, mb.context, mb.compute);
  }
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
