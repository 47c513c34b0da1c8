// A native counterpart of breakdown_probe.cpp for llama.cpp builds other than node-llama-cpp's
// prebuilt CPU one (a CUDA build on a GPU machine: gpu-run.sh). It reads cases written by
// `node measure.mjs --emit DIR` and, for each, loads the model with the given layer offload and
// buffer overrides, creates a context exactly as llama-server would for
// `-c C -np S -b B -ub U -fa on|off -ctk K -ctv V [--swa-full]`, and appends one JSON line with
// llama_get_memory_breakdown() (src/llama-ext.h) in exact bytes, per buffer type.
//
//   native_probe CASES.tsv OUT.jsonl FIRST [END]
// CASES.tsv: one case a line, tab-separated: gguf path, case id, n_gpu_layers, override
// ("-" or "exps": routed-expert tensors kept in host memory, llama-server `-ot exps=CPU`),
// key=value settings as breakdown_probe.cpp reads them, and optionally "run": then the context
// also decodes one full micro-batch and four single tokens, and the GPU's free memory is recorded
// before the model, after it, after the context and after the run (what the process really holds
// beyond the breakdown: CUDA context, cuBLAS workspaces, the CUDA pool, CUDA graphs).
// FIRST..END (0-based, END exclusive) are the lines to run, so a driver can resume after a case
// that kills the process, or run each case in a fresh process.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "llama-ext.h"
#include "llama.h"
#include "probe_settings.h"

namespace {

struct Case {
  std::string model, id, override_kind, settings, run;
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
    std::getline(fields, c.run, '\t');
    c.n_gpu_layers = std::atoi(ngl.c_str());
    cases.push_back(c);
  }
  return cases;
}

// llama-server's context parameters (common_context_params_to_llama) for the case's flags.
llama_context_params context_params(const std::string& spec) {
  llama_context_params p = llama_context_default_params();
  probe::apply_case(spec, p);
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

void append(const char* path, const std::string& line) { probe::append_line(path, line); }

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

// Free bytes on the first GPU, as the driver reports them (cudaMemGetInfo for CUDA); empty without one.
std::string gpu_free() {
  for (size_t i = 0; i < ggml_backend_dev_count(); ++i) {
    ggml_backend_dev_t dev = ggml_backend_dev_get(i);
    if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_GPU) continue;
    size_t free = 0, total = 0;
    ggml_backend_dev_memory(dev, &free, &total);
    return "[" + std::to_string(free) + "," + std::to_string(total) + "]";
  }
  return "null";
}

// The driver's own account of this process's GPU memory (nvidia-smi), when VC_SMI names the command.
std::string smi_used() {
  const char* cmd = std::getenv("VC_SMI");
  if (!cmd) return "null";
  std::string text;
  if (FILE* p = popen(cmd, "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p) && text.size() < 1000) text += buf;
    pclose(p);
  }
  return "\"" + json_escape(text) + "\"";
}

// One full micro-batch of prompt, then four single-token steps (CUDA graphs are captured on the
// repeated single-token shape). The weights are zeros, so the tokens do not matter.
bool run_tokens(llama_context* ctx) {
  const uint32_t n = std::min(llama_n_ubatch(ctx), llama_n_ctx_seq(ctx) - 8);
  std::vector<llama_token> prompt(n);
  for (uint32_t i = 0; i < n; ++i) prompt[i] = static_cast<llama_token>(1 + i % 100);
  if (llama_decode(ctx, llama_batch_get_one(prompt.data(), static_cast<int32_t>(n))) != 0) return false;
  for (int step = 0; step < 4; ++step) {
    llama_token next = 5;
    if (llama_decode(ctx, llama_batch_get_one(&next, 1)) != 0) return false;
  }
  llama_synchronize(ctx);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: native_probe CASES.tsv OUT.jsonl FIRST [END]\n");
    return 2;
  }
  const auto cases = read_cases(argv[1]);
  const char* out = argv[2];
  const size_t first = static_cast<size_t>(std::strtoul(argv[3], nullptr, 10));
  const size_t end = argc == 5 ? std::min(cases.size(), static_cast<size_t>(std::strtoul(argv[4], nullptr, 10))) : cases.size();
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
  std::string free_before_model, free_after_model;
  for (size_t i = first; i < end; ++i) {
    const Case& c = cases[i];
    const std::string key = c.model + "|" + std::to_string(c.n_gpu_layers) + "|" + c.override_kind;
    if (key != loaded_key) {
      if (model) llama_model_free(model);
      llama_model_params mp = llama_model_default_params();
      mp.n_gpu_layers = c.n_gpu_layers;
      if (c.override_kind == "exps") mp.tensor_buft_overrides = experts_on_host;
      last_errors.clear();
      free_before_model = gpu_free();
      model = llama_model_load_from_file(c.model.c_str(), mp);
      free_after_model = gpu_free();
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
    std::string line = "{\"id\":\"" + json_escape(c.id) + "\",\"created\":true,\"flash_attn\":" +
                       std::to_string(static_cast<int>(cp.flash_attn_type)) + breakdown_json(ctx);
    if (c.run == "run") {
      const std::string after_context = gpu_free();
      const bool ran = run_tokens(ctx);
      line += ",\"ran\":" + std::string(ran ? "true" : "false") + ",\"gpu_free\":{\"before_model\":" + free_before_model +
              ",\"after_model\":" + free_after_model + ",\"after_context\":" + after_context + ",\"after_run\":" + gpu_free() + "},\"smi_after_run\":" + smi_used();
    }
    append(out, line + "}");
    llama_free(ctx);
  }
  if (model) llama_model_free(model);
  llama_backend_free();
  return 0;
}
