// A native counterpart of breakdown_probe.cpp for llama.cpp builds other than node-llama-cpp's
// prebuilt CPU one (a CUDA build on a GPU machine: gpu-run.sh). It reads cases written by
// `node measure.mjs --emit DIR` and, for each, loads the model with the given layer offload and
// buffer overrides, creates a context exactly as llama-server would for
// `-c C -np S -b B -ub U -fa on|off -ctk K -ctv V [--swa-full]`, and appends one JSON line with
// llama_get_memory_breakdown() (src/llama-ext.h) in exact bytes, per buffer type.
//
//   native_probe CASES.tsv OUT.jsonl FIRST
// CASES.tsv: one case a line, tab-separated: gguf path, case id, n_gpu_layers, override
// ("-" or "exps": routed-expert tensors kept in host memory, llama-server `-ot exps=CPU`),
// then key=value settings as breakdown_probe.cpp reads them. FIRST is the 0-based line to
// start at, so a driver can resume after a case that kills the process.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "llama-ext.h"
#include "llama.h"

namespace {

struct Case {
  std::string model, id, override_kind, settings;
  int n_gpu_layers = 0;
};

std::vector<Case> read_cases(const char* path) {
  std::vector<Case> cases;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    Case c;
    std::string ngl;
    std::getline(fields, c.model, '\t');
    std::getline(fields, c.id, '\t');
    std::getline(fields, ngl, '\t');
    std::getline(fields, c.override_kind, '\t');
    std::getline(fields, c.settings, '\t');
    c.n_gpu_layers = std::atoi(ngl.c_str());
    cases.push_back(c);
  }
  return cases;
}

bool setting(const std::string& spec, const char* key, long& out) {
  std::string s = "," + spec + ",";
  std::string needle = std::string(",") + key + "=";
  size_t at = s.find(needle);
  if (at == std::string::npos) return false;
  out = std::strtol(s.c_str() + at + needle.size(), nullptr, 10);
  return true;
}

// llama-server's context parameters (common_context_params_to_llama) for the case's flags.
llama_context_params context_params(const std::string& spec) {
  llama_context_params p = llama_context_default_params();
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
  p.n_rs_seq = 0;
  p.n_outputs_max = 0;
  p.n_outputs_max_per_seq = 0;
  p.embeddings = false;
  p.offload_kqv = true;
  p.op_offload = true;
  return p;
}

std::string last_errors;

void log_sink(ggml_log_level level, const char* text, void*) {
  if (level == GGML_LOG_LEVEL_ERROR || std::strstr(text, "llama_init_from_model:") || std::strstr(text, "failed")) {
    if (last_errors.size() < 2000) last_errors += text;
  }
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\', o += ch;
    else if (ch == '\n') o += "\\n";
    else if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
  }
  return o;
}

void append(const char* path, const std::string& line) {
  if (FILE* f = std::fopen(path, "a")) {
    std::fputs(line.c_str(), f);
    std::fputc('\n', f);
    std::fclose(f);
  }
}

std::string breakdown_json(llama_context* ctx) {
  std::string line;
  line += ",\"n_ctx\":" + std::to_string(llama_n_ctx(ctx));
  line += ",\"n_ctx_seq\":" + std::to_string(llama_n_ctx_seq(ctx));
  line += ",\"n_batch\":" + std::to_string(llama_n_batch(ctx));
  line += ",\"n_ubatch\":" + std::to_string(llama_n_ubatch(ctx));
  line += ",\"n_seq_max\":" + std::to_string(llama_n_seq_max(ctx));
  line += ",\"buffers\":{";
  bool first = true;
  for (const auto& [buft, mb] : llama_get_memory_breakdown(ctx)) {
    line += std::string(first ? "" : ",") + "\"" + ggml_backend_buft_name(buft) + "\":{\"model\":" + std::to_string(mb.model) +
            ",\"context\":" + std::to_string(mb.context) + ",\"compute\":" + std::to_string(mb.compute) + "}";
    first = false;
  }
  return line + "}";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: native_probe CASES.tsv OUT.jsonl FIRST\n");
    return 2;
  }
  const auto cases = read_cases(argv[1]);
  const char* out = argv[2];
  const size_t first = static_cast<size_t>(std::strtoul(argv[3], nullptr, 10));
  llama_log_set(log_sink, nullptr);
  // Builds with dynamically loaded backends (GGML_BACKEND_DL, as node-llama-cpp's) need this; a
  // static build (gpu-run.sh) has them registered already.
  if (const char* dir = std::getenv("VC_BACKEND_DIR")) ggml_backend_load_all_from_path(dir);
  llama_backend_init();

  // Routed experts kept in host memory: llama-server's `-ot exps=CPU`.
  const llama_model_tensor_buft_override experts_on_host[] = {
      {"\\.ffn_(up|down|gate|gate_up)_exps", ggml_backend_cpu_buffer_type()}, {nullptr, nullptr}};

  llama_model* model = nullptr;
  std::string loaded_key;
  for (size_t i = first; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string key = c.model + "|" + std::to_string(c.n_gpu_layers) + "|" + c.override_kind;
    if (key != loaded_key) {
      if (model) llama_model_free(model);
      llama_model_params mp = llama_model_default_params();
      mp.n_gpu_layers = c.n_gpu_layers;
      if (c.override_kind == "exps") mp.tensor_buft_overrides = experts_on_host;
      last_errors.clear();
      model = llama_model_load_from_file(c.model.c_str(), mp);
      loaded_key = key;
    }
    std::fprintf(stderr, "case %zu %s\n", i, c.id.c_str());
    if (!model) {
      append(out, "{\"id\":\"" + json_escape(c.id) + "\",\"created\":false,\"errors\":[\"model did not load: " + json_escape(last_errors) + "\"]}");
      continue;
    }
    last_errors.clear();
    llama_context_params cp = context_params(c.settings);
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) {
      append(out, "{\"id\":\"" + json_escape(c.id) + "\",\"created\":false,\"errors\":[\"" + json_escape(last_errors) + "\"]}");
      continue;
    }
    append(out, "{\"id\":\"" + json_escape(c.id) + "\",\"created\":true,\"flash_attn\":" +
                    std::to_string(static_cast<int>(cp.flash_attn_type)) + breakdown_json(ctx) + "}");
    llama_free(ctx);
  }
  if (model) llama_model_free(model);
  llama_backend_free();
  return 0;
}
