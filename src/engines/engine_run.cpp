#include "engines/engine_run.h"

#include <cstdlib>
#include <fmt/format.h>

#include <map>
#include <optional>
#include <sstream>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/serving_dtype.h"
#include "engines/serving_parallel.h"

namespace vc {
namespace {

std::vector<std::string> split_words(const std::string& c) {
  std::vector<std::string> out;
  std::string cur;
  char quote = 0;
  bool any = false;
  for (char ch : c) {
    if (quote) {
      if (ch == quote) quote = 0;
      else cur += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      any = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\\') {
      if (!cur.empty() || any) out.push_back(cur);
      cur.clear();
      any = false;
    } else {
      cur += ch;
    }
  }
  if (quote) throw InputError("--engine-command", "has an unclosed quote");
  if (!cur.empty() || any) out.push_back(cur);
  return out;
}

uint64_t number(const std::string& flag, const std::string& v, uint64_t lo, uint64_t hi) {
  return parse_count(v, flag, lo, hi);
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

double fraction(const std::string& flag, const std::string& v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (const std::exception&) {
  }
  throw InputError(flag, "'" + v + "' is not a number");
}

// vLLM's and SGLang's expert- and data-parallel flags (engines/serving_parallel.h).
bool is_serving_parallel_flag(const std::string& flag) {
  return flag == "--enable-expert-parallel" || flag == "--enable-ep-moe" || flag == "--ep" || flag == "--ep-size" || flag == "--expert-parallel-size" ||
         flag == "-dp" || flag == "--dp" || flag == "--dp-size" || flag == "--data-parallel-size";
}

}  // namespace

ServingParallel serving_parallel(const std::string& command) {
  const auto w = split_words(command);
  ServingParallel p;
  for (size_t i = 0; i < w.size(); ++i) {
    std::string flag = w[i], value;
    const auto eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) value = flag.substr(eq + 1), flag = flag.substr(0, eq);
    if (!is_serving_parallel_flag(flag)) continue;
    if (flag == "--enable-expert-parallel" || flag == "--enable-ep-moe") {
      p.expert_parallel = true;
      continue;
    }
    if (value.empty()) {
      if (i + 1 >= w.size()) throw InputError(flag, "needs a value");
      value = w[++i];
    }
    const uint64_t n = number(flag, value, 1, 1024);
    if (flag.find("dp") != std::string::npos || flag.find("data") != std::string::npos) p.data_parallel = n;
    else p.expert_parallel = n > 1;
  }
  return p;
}

EngineRun parse_engine_command(const std::string& command) {
  if (command.size() > kMaxEngineCommandBytes) throw InputError("--engine-command", "is longer than 8,192 characters");
  auto w = split_words(command);
  EngineRun r;
  size_t i = 0;
  while (i < w.size() && w[i].find('=') != std::string::npos && w[i][0] != '-') ++i;  // VAR=value prefixes
  if (i == w.size()) throw InputError("--engine-command", "is empty; paste e.g. \"llama-server -m model.gguf -c 32768\" or \"vllm serve ORG/REPO\"");
  const std::string exe = w[i].substr(w[i].rfind('/') == std::string::npos ? 0 : w[i].rfind('/') + 1);
  if (exe.rfind("llama-", 0) == 0) {
    r.engine = EngineKind::LlamaCpp;
    if (exe != "llama-server") r.llamacpp_cache_ram_mib = 0;  // only the server keeps a prompt cache
  } else if (exe == "vllm") {
    r.engine = EngineKind::Vllm;
    if (i + 2 < w.size() + 1 && i + 1 < w.size() && w[i + 1] == "serve") {
      ++i;
      if (i + 1 < w.size() && w[i + 1][0] != '-') r.model = w[++i];
    }
  } else if (exe == "sglang" && i + 1 < w.size() && w[i + 1] == "serve") {
    r.engine = EngineKind::Sglang;
    ++i;
  } else if ((exe.rfind("python", 0) == 0) && i + 2 < w.size() && w[i + 1] == "-m" && w[i + 2] == "sglang.launch_server") {
    r.engine = EngineKind::Sglang;
    i += 2;
  } else {
    throw InputError("--engine-command", "'" + exe +
                                             "' is not a known engine; accepted: llama-server, llama-cli, llama-completion (llama.cpp), vllm serve, "
                                             "python -m sglang.launch_server, sglang serve");
  }
  bool enable_lora = false;
  std::optional<uint64_t> max_loras;
  for (++i; i < w.size(); ++i) {
    std::string flag = w[i], value;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    auto take = [&]() -> std::string {
      if (!value.empty()) return value;
      if (i + 1 >= w.size()) throw InputError(flag, "needs a value");
      return w[++i];
    };
    if (r.engine == EngineKind::LlamaCpp) {
      auto& s = r.llamacpp;
      if (flag == "-m" || flag == "--model") r.model = take();
      else if (flag == "-c" || flag == "--ctx-size") s.n_ctx = number(flag, take(), 1, kMaxContextTokens);
      else if (flag == "-np" || flag == "--parallel") s.n_seq = number(flag, take(), 1, 256);
      else if (flag == "-b" || flag == "--batch-size") s.n_batch = number(flag, take(), 1, 1u << 20);
      else if (flag == "-ub" || flag == "--ubatch-size") s.n_ubatch = number(flag, take(), 1, 1u << 20);
      else if (flag == "-ctk" || flag == "--cache-type-k") s.type_k = upper(take());
      else if (flag == "-ctv" || flag == "--cache-type-v") s.type_v = upper(take());
      else if (flag == "--swa-full") s.swa_full = true;
      else if (flag == "-cram" || flag == "--cache-ram") {
        const std::string v = take();
        r.llamacpp_cache_ram_mib = v == "-1" ? -1 : static_cast<int64_t>(number(flag, v, 0, 1u << 30));
      }
      else if (flag == "--kv-unified" || flag == "-kvu") s.kv_unified = true;
      else if (flag == "-fa" || flag == "--flash-attn") {
        std::string v = take();
        if (v != "on" && v != "off" && v != "auto") throw InputError(flag, "'" + v + "' is not on, off or auto");
        s.flash_attn = v != "off";
      } else if (flag == "-ngl" || flag == "--n-gpu-layers" || flag == "--gpu-layers") {
        std::string v = take();
        r.placement.n_gpu_layers = (v == "all" || v == "auto") ? 1u << 20 : number(flag, v, 0, 1u << 20);
      } else if (flag == "-ts" || flag == "--tensor-split") {
        std::stringstream ss(take());
        std::string part;
        r.placement.tensor_split.clear();
        while (std::getline(ss, part, ',')) r.placement.tensor_split.push_back(fraction(flag, part));
        if (r.placement.tensor_split.empty() || r.placement.tensor_split.size() > 64) throw InputError(flag, "needs 1 to 64 comma-separated weights");
        r.placement.devices = r.placement.tensor_split.size();
      } else if (flag == "-ot" || flag == "--override-tensor") {
        for (auto& o : parse_overrides(take())) r.placement.overrides.push_back(o);
      } else if (flag == "--cpu-moe" || flag == "-cmoe") {
        for (auto& o : cpu_moe_overrides(std::nullopt)) r.placement.overrides.push_back(o);
      } else if (flag == "--n-cpu-moe" || flag == "-ncmoe") {
        add_n_cpu_moe(r.placement, number(flag, take(), 0, 4096));
      } else if (flag == "--no-mmproj-offload" || flag == "--mmproj-offload") {
        // read with the flags below by estimate's companions (engines/companions.h)
      } else if (flag == "-md" || flag == "--model-draft") {
        r.speculative.draft_model = take();  // also read by estimate's companions (engines/companions.h)
      } else if (flag == "--spec-type") {
        r.speculative.spec_type = take();
      } else if (flag == "--spec-draft-n-max" || flag == "--draft-max" || flag == "--draft" || flag == "--draft-n") {
        r.speculative.draft_max = number(flag, take(), 1, 64);
      } else if (flag == "-mm" || flag == "--mmproj" || flag == "--lora" || flag == "-ngld" ||
                 flag == "--gpu-layers-draft" || flag == "--n-gpu-layers-draft" || flag == "-cd" || flag == "--ctx-size-draft" || flag == "-ctkd" ||
                 flag == "--cache-type-k-draft" || flag == "-ctvd" || flag == "--cache-type-v-draft") {
        (void)take();
      } else {
        r.notes.push_back("ignored " + flag + " (it does not change what llama.cpp allocates in this model)");
      }
    } else if (r.engine == EngineKind::Sglang) {
      auto& g = r.sglang;
      if (flag == "--model-path" || flag == "--model") r.model = take();
      else if (flag == "--tp" || flag == "--tp-size" || flag == "--tensor-parallel-size") g.tensor_parallel = number(flag, take(), 1, 1024);
      else if (flag == "--pp" || flag == "--pp-size" || flag == "--pipeline-parallel-size") g.pipeline_parallel = number(flag, take(), 1, 1024);
      else if (flag == "--mem-fraction-static") g.mem_fraction_static = fraction(flag, take());
      else if (flag == "--context-length") g.context_length = parse_tokens(take(), flag);
      else if (flag == "--kv-cache-dtype") g.kv_cache_dtype = take();
      else if (flag == "--dtype") g.dtype = take();
      else if (flag == "--max-running-requests") g.max_running_requests = number(flag, take(), 1, 1u << 20);
      else if (flag == "--max-total-tokens") g.max_total_tokens = number(flag, take(), 1, uint64_t{1} << 40);
      else if (flag == "--chunked-prefill-size") {
        std::string v = take();
        g.chunked_prefill_size = v == "-1" ? int64_t{-1} : static_cast<int64_t>(number(flag, v, 1, 1u << 22));
      } else if (flag == "--cuda-graph-max-bs") g.cuda_graph_max_bs = number(flag, take(), 1, 1u << 16);
      else if (flag == "--page-size") g.page_size = number(flag, take(), 1, 4096);
      else if (flag == "--swa-full-tokens-ratio") g.swa_full_tokens_ratio = fraction(flag, take());
      else if (flag == "--max-mamba-cache-size") g.max_mamba_cache_size = number(flag, take(), 1, 1u << 24);
      else if (flag == "--mamba-full-memory-ratio") {
        const std::string v = take();
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || !(d > 0 && d <= 100)) throw InputError(flag, "'" + v + "' is not a ratio above 0 (e.g. 0.9)");
        g.mamba_full_memory_ratio = d;
      } else if (flag == "--mamba-ssm-dtype") {
        g.mamba_ssm_dtype = take();
        if (g.mamba_ssm_dtype != "float32" && g.mamba_ssm_dtype != "bfloat16") throw InputError(flag, "'" + g.mamba_ssm_dtype + "' is not accepted; accepted: float32, bfloat16");
      } else if (flag == "--disable-radix-cache") g.disable_radix_cache = true;
      else if (flag == "--disable-custom-all-reduce") g.disable_custom_all_reduce = true;
      else if (flag == "--enable-lora") enable_lora = true;
      else if (flag == "--max-loras-per-batch") max_loras = number(flag, take(), 1, 1024);
      else if (flag == "--max-lora-rank") g.lora.max_lora_rank = number(flag, take(), 1, 4096);
      else if (flag == "--lora-paths" || flag == "--lora-path") {
        // NAME=PATH, PATH or JSON entries up to the next flag: the adapters loaded at start.
        if (!value.empty()) ++g.lora.adapters;
        while (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) ++i, ++g.lora.adapters;
      } else if (flag == "--lora-target-modules") {
        std::vector<std::string> names;
        if (!value.empty()) names.push_back(value);
        while (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) names.push_back(w[++i]);
        set_sglang_lora_targets(g.lora, names);
      } else if (flag == "--max-loaded-loras" || flag == "--lora-backend" || flag == "--lora-eviction-policy" || flag == "--max-lora-chunk-size") take();
      else if (flag == "--enable-lora-overlap-loading") continue;
      else if (is_serving_parallel_flag(flag)) {
        if (flag != "--enable-ep-moe") (void)number(flag, take(), 1, 1024);  // read by serving_parallel()
      }
      else if (flag == "--trust-remote-code" || flag == "--enable-metrics" || flag == "--enable-p2p-check") continue;
      else if (flag == "--host" || flag == "--port" || flag == "--served-model-name") take();
      else r.notes.push_back("ignored " + flag + " (not mapped onto SGLang's memory profile)");
    } else {
      auto& v = r.vllm;
      if (flag == "--max-model-len") v.kv.max_model_len = parse_tokens(take(), flag);
      else if (flag == "--max-num-batched-tokens") v.max_num_batched_tokens = number(flag, take(), 1, 1u << 22);
      else if (flag == "--gpu-memory-utilization") v.gpu_memory_utilization = fraction(flag, take());
      else if (flag == "--kv-cache-dtype") v.kv.kv_cache_dtype = take();
      else if (flag == "--block-size") v.kv.block_size = number(flag, take(), 1, 4096);
      else if (flag == "-tp" || flag == "--tensor-parallel-size") v.kv.tensor_parallel = number(flag, take(), 1, 1024);
      else if (flag == "-pp" || flag == "--pipeline-parallel-size") v.kv.pipeline_parallel = number(flag, take(), 1, 1024);
      else if (flag == "--max-num-seqs") v.max_num_seqs = number(flag, take(), 1, 1u << 20);
      else if (is_serving_parallel_flag(flag)) {
        if (flag != "--enable-expert-parallel") (void)number(flag, take(), 1, 1024);  // read by serving_parallel()
      }
      else if (flag == "--dtype") v.kv.dtype = take();
      else if (flag == "--quantization" || flag == "-q") v.quantization = take();
      else if (flag == "--enable-lora") enable_lora = true;
      else if (flag == "--max-loras") max_loras = parse_max_loras(take(), flag);
      else if (flag == "--max-lora-rank") v.lora.max_lora_rank = parse_max_lora_rank(take(), flag);
      else if (flag == "--lora-modules") {
        // name=path pairs up to the next flag: the adapters vLLM loads; their slots are what counts.
        while (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) ++i;
      } else if (flag == "--max-cpu-loras" || flag == "--lora-dtype") take();
      else if (flag == "--fully-sharded-loras") r.notes.push_back("--fully-sharded-loras: LoRA slots taken unsharded (the larger figure)");
      else r.notes.push_back("ignored " + flag + " (not mapped onto vLLM's memory budget)");
    }
  }
  if (r.engine == EngineKind::Sglang) {
    // SGLang turns LoRA on with --enable-lora or --lora-paths (8 slots by default), and refuses it
    // without adapters unless both the rank and the target modules are given (server_args.py).
    SglangLoraSettings& l = r.sglang.lora;
    if (enable_lora || l.adapters) {
      if (!l.adapters && (!l.max_lora_rank || (l.target_modules.empty() && l.unmodelled_modules.empty())))
        throw InputError("--enable-lora", "SGLang needs --lora-paths, or both --max-lora-rank and --lora-target-modules");
      l.max_loras_per_batch = max_loras.value_or(kSglangDefaultLorasPerBatch);
    } else if (max_loras || l.max_lora_rank) {
      r.notes.push_back("LoRA flags without --enable-lora or --lora-paths: SGLang runs without LoRA, no pool allocated");
    }
  } else if (enable_lora) {
    r.vllm.lora.max_loras = max_loras.value_or(1);  // vLLM allocates LoRA slots only with --enable-lora (--max-loras defaults to 1)
  } else if (max_loras) {
    r.notes.push_back("--max-loras without --enable-lora: vLLM runs without LoRA, no slots allocated");
  }
  if (r.engine == EngineKind::Vllm && !(r.vllm.gpu_memory_utilization > 0 && r.vllm.gpu_memory_utilization <= 1))
    throw InputError("--gpu-memory-utilization", "must be above 0 and at most 1");
  // Refuse what the engine would refuse, before any model is read.
  if (r.engine == EngineKind::Vllm) {
    vllm_kv_dtype_bytes(r.vllm.kv);
    if (!r.vllm.quantization.empty() && r.vllm.quantization != "fp8")
      r.notes.push_back("--quantization " + r.vllm.quantization + ": weights taken as the checkpoint stores them");
    if (r.vllm.quantization != "fp8") r.vllm.quantization.clear();
  }
  if (r.engine == EngineKind::Sglang) {
    sglang_kv_dtype_bytes(r.sglang.kv_cache_dtype, r.sglang.dtype);
    if (r.sglang.mem_fraction_static && !(*r.sglang.mem_fraction_static > 0 && *r.sglang.mem_fraction_static < 1))
      throw InputError("--mem-fraction-static", "must be above 0 and below 1");
  }
  return r;
}

}  // namespace vc
