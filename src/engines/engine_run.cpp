#include "engines/engine_run.h"

#include <cctype>
#include <cstdlib>
#include <fmt/format.h>

#include <map>
#include <optional>
#include <sstream>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "engines/serving_cpu_offload.h"
#include "engines/serving_dtype.h"
#include "engines/serving_parallel.h"
#include "engines/serving_speculative.h"
#include "engines/sglang_lora_adapters.h"
#include "engines/vllm_lora_adapters.h"

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

// Which parallel setting a vLLM or SGLang flag sets (engines/serving_parallel.h has the sources).
enum class Parallel { None, Tp, Pp, Dp, DpLocal, Ep, ExpertOn, ExpertOff, DpAttention, EpMoe, IgnoredValue, IgnoredSwitch };

Parallel parallel_flag(EngineKind engine, const std::string& f) {
  if (engine == EngineKind::Vllm) {  // vllm/engine/arg_utils.py, ParallelConfig group
    if (f == "--tensor-parallel-size" || f == "-tp") return Parallel::Tp;
    if (f == "--pipeline-parallel-size" || f == "-pp") return Parallel::Pp;
    if (f == "--data-parallel-size" || f == "-dp") return Parallel::Dp;
    if (f == "--data-parallel-size-local" || f == "-dpl") return Parallel::DpLocal;
    if (f == "--enable-expert-parallel") return Parallel::ExpertOn;
    if (f == "--no-enable-expert-parallel") return Parallel::ExpertOff;
    if (f == "--data-parallel-rank" || f == "-dpn" || f == "--data-parallel-start-rank" || f == "-dpr" || f == "--data-parallel-address" || f == "-dpa" ||
        f == "--data-parallel-rpc-port" || f == "-dpp" || f == "--data-parallel-backend" || f == "-dpb")
      return Parallel::IgnoredValue;
    if (f == "--data-parallel-hybrid-lb" || f == "--no-data-parallel-hybrid-lb" || f == "--enable-eplb" || f == "--no-enable-eplb") return Parallel::IgnoredSwitch;
    return Parallel::None;
  }
  // python/sglang/srt/server_args.py (ServerArgs); --tp and --dp: argparse's unambiguous prefixes.
  if (f == "--tp-size" || f == "--tensor-parallel-size" || f == "--tp") return Parallel::Tp;
  if (f == "--pp-size" || f == "--pipeline-parallel-size") return Parallel::Pp;
  if (f == "--dp-size" || f == "--data-parallel-size" || f == "--dp") return Parallel::Dp;
  if (f == "--ep-size" || f == "--expert-parallel-size" || f == "--ep") return Parallel::Ep;
  if (f == "--enable-dp-attention") return Parallel::DpAttention;
  if (f == "--enable-ep-moe") return Parallel::EpMoe;
  if (f == "--nnodes" || f == "--node-rank" || f == "--dist-init-addr" || f == "--nccl-init-addr" || f == "--load-balance-method") return Parallel::IgnoredValue;
  return Parallel::None;
}

// The parallel flags of one command: each setting given once (a second, different value is refused:
// the engine would silently keep the last), then the checks the engines themselves make.
class ParallelFlags {
 public:
  explicit ParallelFlags(EngineKind engine) : engine_(engine) {}

  // true when `flag` is a parallel flag (its value, if any, taken with `take`).
  template <typename Take>
  bool read(const std::string& flag, bool has_value, Take take, EngineRun& r) {
    if (engine_ == EngineKind::Sglang && flag == "--pp")
      throw InputError(flag, "is ambiguous to SGLang's parser (--pp-size, --pp-max-micro-batch-size, --pp-async-batch-depth); accepted: " +
                                 serving_parallel_spellings(true));
    if (engine_ == EngineKind::Sglang && flag.find('_') != std::string::npos) {
      std::string dashed = flag;
      for (char& c : dashed) c = c == '_' ? '-' : c;
      if (parallel_flag(engine_, dashed) != Parallel::None)
        throw InputError(flag, "is not a flag SGLang's parser reads (it takes dashes, not underscores); accepted: " + serving_parallel_spellings(true));
    }
    const Parallel kind = parallel_flag(engine_, flag);
    auto no_value = [&] {
      if (has_value) throw InputError(flag, "takes no value (the engine's parser refuses one); accepted: " + serving_parallel_spellings(engine_ == EngineKind::Sglang));
    };
    switch (kind) {
      case Parallel::None: return false;
      case Parallel::IgnoredValue: (void)take(); return true;
      case Parallel::IgnoredSwitch: no_value(); return true;
      case Parallel::ExpertOn:
      case Parallel::ExpertOff:
        no_value();
        set("expert parallel", kind == Parallel::ExpertOn ? 1 : 0, flag);
        r.parallel.expert_parallel = kind == Parallel::ExpertOn;
        return true;
      case Parallel::DpAttention: no_value(); r.parallel.dp_attention = true; return true;
      case Parallel::EpMoe: no_value(); ep_moe_ = flag; return true;
      default: break;
    }
    const uint64_t n = parse_count(take(), flag, 1, 1024);
    switch (kind) {
      case Parallel::Tp:
        set("tensor parallel", n, flag);
        (engine_ == EngineKind::Sglang ? r.sglang.tensor_parallel : r.vllm.kv.tensor_parallel) = n;
        break;
      case Parallel::Pp:
        set("pipeline parallel", n, flag);
        (engine_ == EngineKind::Sglang ? r.sglang.pipeline_parallel : r.vllm.kv.pipeline_parallel) = n;
        break;
      case Parallel::Dp:
        set("data parallel", n, flag);
        r.parallel.data_parallel = n;
        break;
      case Parallel::DpLocal:
        set("data parallel on this node", n, flag);
        r.parallel.data_parallel_local = n;
        break;
      default:
        set("expert parallel size", n, flag);
        r.parallel.expert_parallel_size = n;
        break;
    }
    return true;
  }

  // The engines' own consistency checks, once every flag is read.
  void finish(EngineRun& r) const {
    ServingParallel& p = r.parallel;
    if (engine_ == EngineKind::Vllm) {
      if (p.data_parallel_local && (p.data_parallel_local > p.data_parallel || p.data_parallel % p.data_parallel_local != 0))
        throw InputError(flag_of("data parallel on this node"),
                         fmt::format("runs {} replicas on this node, which does not divide the {} of --data-parallel-size / -dp (vLLM places "
                                     "--data-parallel-size-local of them per node)",
                                     p.data_parallel_local, p.data_parallel));
      return;
    }
    const uint64_t tp = r.sglang.tensor_parallel;
    if (!ep_moe_.empty()) {  // server_args.py: --enable-ep-moe sets ep_size = tp_size
      if (p.expert_parallel_size && p.expert_parallel_size != tp)
        throw InputError(ep_moe_, fmt::format("sets the expert-parallel size to the TP size {}, but {} gives {}; give one of them", tp,
                                              flag_of("expert parallel size"), p.expert_parallel_size));
      p.expert_parallel_size = tp;
    }
    if (p.expert_parallel_size > 1 && (p.expert_parallel_size > tp || tp % p.expert_parallel_size != 0))
      throw InputError(flag_of("expert parallel size"), fmt::format("{} does not divide --tp-size {}: SGLang's expert ranks split the TP ranks (each MoE group is "
                                                                    "TP / EP ranks); accepted: a divisor of the TP size",
                                                                    p.expert_parallel_size, tp));
    p.expert_parallel = p.expert_parallel_size > 1;
    if (p.data_parallel == 1) p.dp_attention = false;  // server_args.py _handle_data_parallelism turns it off
    if (p.dp_attention && tp % p.data_parallel != 0)
      throw InputError(flag_of("data parallel"), fmt::format("{} does not divide --tp-size {}; with --enable-dp-attention SGLang asserts tp_size % dp_size == 0",
                                                             p.data_parallel, tp));
  }

 private:
  void set(const std::string& setting, uint64_t n, const std::string& flag) {
    const auto [it, fresh] = seen_.try_emplace(setting, n, flag);
    if (!fresh && it->second.first != n)
      throw InputError(flag, fmt::format("gives {} {}, but {} gave {}; give it once (the engine would keep the last silently)", setting, n == 0 ? "off" : std::to_string(n),
                                         it->second.second, it->second.first == 0 ? "off" : std::to_string(it->second.first)));
    it->second = {n, flag};
  }
  std::string flag_of(const std::string& setting) const {
    const auto it = seen_.find(setting);
    return it == seen_.end() ? "--engine-command" : it->second.second;
  }

  EngineKind engine_;
  std::map<std::string, std::pair<uint64_t, std::string>> seen_;
  std::string ep_moe_;  // --enable-ep-moe as given
};

// SGLang's draft as server_args.py settles it: EAGLE without a draft path on a model with MTP
// layers drafts with them (the draft path becomes the model's own), STANDALONE and EAGLE3 need
// one, and a draft path without an algorithm is unused.
void settle_sglang_draft(ServingSpeculative& s, const std::string& draft, std::vector<std::string>& notes) {
  if (!s.on()) {
    if (!draft.empty()) notes.push_back("--speculative-draft-model-path without --speculative-algorithm: SGLang loads no draft");
    if (s.steps || s.topk || s.draft_tokens) notes.push_back("--speculative-num-* without --speculative-algorithm: SGLang drafts nothing");
    return;
  }
  s.draft = draft;
  if (s.method == "eagle" && draft.empty()) s.method = "mtp";
  if (s.method == "mtp" && !draft.empty()) s.draft.clear();  // NEXTN with a separate NextN checkpoint: the same layers, taken from the model
  if (s.needs_draft() && s.draft.empty())
    throw InputError("--speculative-draft-model-path", "is needed for --speculative-algorithm " + sglang_algorithm_name(s.method) + " (the draft model's path)");
}

}  // namespace

std::string serving_parallel_spellings(bool sglang) {
  return sglang ? "--tp-size N / --tensor-parallel-size N / --tp N, --pp-size N / --pipeline-parallel-size N, --dp-size N / --data-parallel-size N / --dp N, "
                  "--ep-size N / --expert-parallel-size N / --ep N, --enable-dp-attention, --enable-ep-moe (python/sglang/srt/server_args.py)"
                : "--tensor-parallel-size N / -tp N, --pipeline-parallel-size N / -pp N, --data-parallel-size N / -dp N, --data-parallel-size-local N / "
                  "-dpl N, --enable-expert-parallel / --no-enable-expert-parallel (vllm/engine/arg_utils.py); N from 1 to 1024, also as --flag=N";
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
    r.placement.n_gpu_layers = 1u << 20;  // llama.cpp's default -ngl auto: every layer, then --fit
    r.llamacpp_defaults = {.ngl = true, .ctx = true, .fit = true};
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
  std::string sglang_draft;  // --speculative-draft-model-path
  bool slots_auto = exe == "llama-server";  // llama-server's -np defaults to -1, "auto"
  const bool serving = r.engine == EngineKind::Vllm || r.engine == EngineKind::Sglang;
  ParallelFlags parallel(r.engine);
  for (++i; i < w.size(); ++i) {
    std::string flag = w[i], value;
    bool has_value = false;
    // --flag=value everywhere; -tp=2 too for vLLM and SGLang (argparse splits a known short flag at '=').
    if (auto eq = flag.find('='); eq != std::string::npos && (flag.rfind("--", 0) == 0 || (serving && flag.rfind("-", 0) == 0))) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    // vLLM's FlexibleArgumentParser reads '_' in a long flag's name as '-' (vllm/utils/argparse_utils.py).
    if (r.engine == EngineKind::Vllm && flag.rfind("--", 0) == 0) {
      for (char& c : flag) c = c == '_' ? '-' : c;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= w.size()) throw InputError(flag, "needs a value");
      return w[++i];
    };
    // A flag not read here, with its value when the next word is one (none of these CLIs takes a
    // positional argument after its flags), so "--numa distribute" is one note, not two.
    auto ignored = [&]() -> std::string {
      if (has_value) return flag + "=" + value;
      const bool next_is_value = i + 1 < w.size() && !w[i + 1].empty() &&
                                 (w[i + 1][0] != '-' || (w[i + 1].size() > 1 && (std::isdigit(static_cast<unsigned char>(w[i + 1][1])) || w[i + 1][1] == '.')));
      return next_is_value && flag.rfind("-", 0) == 0 ? flag + " " + w[++i] : flag;
    };
    if (serving && parallel.read(flag, has_value, take, r)) continue;
    if (r.engine == EngineKind::LlamaCpp) {
      auto& s = r.llamacpp;
      if (flag == "-m" || flag == "--model") r.model = take();
      else if (flag == "-hf" || flag == "-hfr" || flag == "--hf-repo") r.model = "hf:" + take();  // ORG/REPO[:QUANT]
      else if (flag == "-c" || flag == "--ctx-size") {
        const uint64_t n = number(flag, take(), 0, kMaxContextTokens);  // 0: the model's trained context
        r.llamacpp_defaults.ctx = n == 0;
        if (n) s.n_ctx = n;
      }
      else if (flag == "-np" || flag == "--parallel") {
        const std::string v = take();
        slots_auto = exe == "llama-server" && v == "-1";
        if (!slots_auto) {
          try {
            s.n_seq = number(flag, v, 1, 256);
          } catch (const InputError&) {
            if (exe != "llama-server") throw;
            throw InputError(flag, "'" + v + "' is not a slot count; accepted: a whole number from 1 to 256, or -1 (auto: 4 slots, one unified cache)");
          }
        }
      }
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
        // common/arg.cpp: a number, "auto" (the default: every layer, then --fit) or "all".
        std::string v = take();
        if (v == "-1") v = "auto";
        r.placement.n_gpu_layers = (v == "all" || v == "auto") ? 1u << 20 : number(flag, v, 0, 1u << 20);
        r.llamacpp_defaults.ngl = v == "auto";
      } else if (flag == "-fit" || flag == "--fit") {
        std::string v = take();
        if (v != "on" && v != "off") throw InputError(flag, "'" + v + "' is not on or off");
        r.llamacpp_defaults.fit = v == "on";
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
      } else if (flag == "--mmap" || flag == "--no-mmap") {
        r.placement.mmap = flag == "--mmap";
      } else if (flag == "--mlock") {
        r.placement.mlock = true;
      } else if (flag == "-lm" || flag == "--load-mode") {
        // common/arg.cpp (newer builds, in place of --mmap/--no-mmap/--mlock): auto|none|mmap|mlock|mmap+mlock|dio.
        const std::string v = take();
        if (v != "auto" && v != "none" && v != "mmap" && v != "mlock" && v != "mmap+mlock" && v != "dio")
          throw InputError(flag, "'" + v + "' is not a load mode; accepted: auto, none, mmap, mlock, mmap+mlock, dio");
        r.placement.mmap = v == "auto" || v == "mmap" || v == "mmap+mlock";
        r.placement.mlock = v == "mlock" || v == "mmap+mlock";
      } else if (flag == "-nr" || flag == "--no-repack") {
        r.placement.repack = false;
      } else if (flag == "-t" || flag == "--threads") {
        // common/arg.cpp: -1 (the default) is cpu_get_num_math(), the physical cores.
        const std::string v = take();
        if (v == "-1") r.threads.reset();
        else r.threads = number(flag, v, 1, kMaxCpuThreads);
      } else if (flag == "--numa") {
        // common/arg.cpp: distribute (spread over all nodes), isolate (threads on the node that
        // started), numactl (numactl's CPU map). Only the speed model reads it (speed/token_reads.h).
        const std::string v = take();
        if (v != "distribute" && v != "isolate" && v != "numactl") throw InputError(flag, "'" + v + "' is not a NUMA mode; accepted: distribute, isolate, numactl");
        r.llamacpp_numa = v;
      } else if (flag == "-tb" || flag == "--threads-batch") {
        (void)take();  // prompt-processing threads: the decode speed reads -t
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
                 flag == "--cache-type-k-draft" || flag == "-ctvd" || flag == "--cache-type-v-draft" || flag == "-devd" ||
                 flag == "--device-draft" || flag == "-otd" || flag == "--override-tensor-draft") {
        (void)take();
      } else {
        r.notes.push_back("ignored " + ignored() + " (it does not change what llama.cpp allocates in this model)");
      }
    } else if (r.engine == EngineKind::Sglang) {
      auto& g = r.sglang;
      if (flag == "--model-path" || flag == "--model") r.model = take();
      else if (flag == "--mem-fraction-static") g.mem_fraction_static = fraction(flag, take());
      else if (flag == "--context-length") {
        g.context_length = parse_tokens(take(), flag);
        r.serving_context_given = true;
      }
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
      else if (flag == "--cpu-offload-gb") g.cpu_offload_cap = cpu_offload_cap_bytes(take(), flag, true);  // server_args.py: type=int
      else if (flag == "--disable-custom-all-reduce") g.disable_custom_all_reduce = true;
      else if (flag == "--enable-dp-lm-head") g.enable_dp_lm_head = true;
      else if (flag == "--moe-dense-tp-size") {
        // server_args.py: argparse type=int, then assert moe_dense_tp_size in {1, None}.
        const std::string v = take();
        if (number(flag, v, 0, uint64_t{1} << 20) != 1)
          throw InputError(flag, "'" + v + "' is not accepted; SGLang asserts moe_dense_tp_size in {1, None}: give 1 or leave it out");
        g.moe_dense_tp_size = 1;
      }
      else if (flag == "--enable-lora") enable_lora = true;
      else if (flag == "--max-loras-per-batch") max_loras = number(flag, take(), 1, 1024);
      else if (flag == "--max-lora-rank") g.lora.max_lora_rank = number(flag, take(), 1, 4096);
      else if (flag == "--lora-paths" || flag == "--lora-path") {
        // NAME=PATH, PATH or JSON entries up to the next flag: the adapters loaded at start, whose
        // adapter_config.json give the rank and modules when the flags do not (sglang_lora_adapters.h).
        if (!value.empty()) g.lora.adapter_paths.push_back(sglang_lora_path_entry(value));
        while (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) g.lora.adapter_paths.push_back(sglang_lora_path_entry(w[++i]));
        g.lora.adapters = g.lora.adapter_paths.size();
      } else if (flag == "--lora-target-modules") {
        std::vector<std::string> names;
        if (!value.empty()) names.push_back(value);
        while (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) names.push_back(w[++i]);
        set_sglang_lora_targets(g.lora, names);
      } else if (flag == "--max-loaded-loras" || flag == "--lora-backend" || flag == "--lora-eviction-policy" || flag == "--max-lora-chunk-size") take();
      else if (flag == "--enable-lora-overlap-loading") continue;
      else if (flag == "--speculative-algorithm" || flag == "--speculative-algo") {
        r.serving_speculative.method = sglang_speculative_method(take());
        r.serving_speculative.source_flag = "--speculative-algorithm";
      } else if (flag == "--speculative-draft-model-path") sglang_draft = take();
      else if (flag == "--speculative-num-steps") r.serving_speculative.steps = number(flag, take(), 1, 64);
      else if (flag == "--speculative-eagle-topk") r.serving_speculative.topk = number(flag, take(), 1, 64);
      else if (flag == "--speculative-num-draft-tokens") r.serving_speculative.draft_tokens = number(flag, take(), 1, 1024);
      else if (flag == "--speculative-draft-model-revision" || flag == "--speculative-token-map" || flag == "--speculative-attention-mode" ||
               flag == "--speculative-accept-threshold-single" || flag == "--speculative-accept-threshold-acc")
        take();
      else if (flag == "--trust-remote-code" || flag == "--enable-metrics" || flag == "--enable-p2p-check") continue;
      else if (flag == "--host" || flag == "--port" || flag == "--served-model-name") take();
      else r.notes.push_back("ignored " + ignored() + " (not mapped onto SGLang's memory profile)");
    } else {
      auto& v = r.vllm;
      if (flag == "--max-model-len") {
        v.kv.max_model_len = parse_tokens(take(), flag);
        r.serving_context_given = true;
      }
      else if (flag == "--max-num-batched-tokens") v.max_num_batched_tokens = number(flag, take(), 1, 1u << 22);
      else if (flag == "--gpu-memory-utilization") v.gpu_memory_utilization = fraction(flag, take());
      else if (flag == "--kv-cache-dtype") v.kv.kv_cache_dtype = take();
      else if (flag == "--block-size") v.kv.block_size = number(flag, take(), 1, 4096);
      else if (flag == "--max-num-seqs") v.max_num_seqs = number(flag, take(), 1, 1u << 20);
      else if (flag == "--limit-mm-per-prompt") read_vllm_mm_limits(v.mm_limits, flag, take());
      else if (flag.rfind("--limit-mm-per-prompt.", 0) == 0) read_vllm_mm_limits(v.mm_limits, "--limit-mm-per-prompt", take(), flag.substr(22));
      else if (flag == "--dtype") v.kv.dtype = take();
      else if (flag == "--quantization" || flag == "-q") v.quantization = take();
      else if (flag == "--cpu-offload-gb") v.cpu_offload_cap = cpu_offload_cap_bytes(take(), flag, false);  // config/offload.py: float, ge=0
      else if (flag == "--cpu-offload-params" || flag == "--offload-params") {
        // set[str] fields: argparse nargs="+" (collection_to_kwargs in
        // https://github.com/vllm-project/vllm/blob/main/vllm/engine/arg_utils.py), one or more words
        // up to the next option; with '=' exactly that one; a later use of the flag replaces it.
        std::vector<std::string> segments;
        if (has_value) segments.push_back(value);
        else
          while (i + 1 < w.size() && w[i + 1].rfind("-", 0) != 0) segments.push_back(w[++i]);
        if (segments.empty())
          throw InputError(flag, "needs one or more parameter-name segments, space-separated (e.g. mlp, or experts.w13_weight experts.w2_weight)");
        (flag == "--offload-params" ? v.offload.offload_params : v.offload.cpu_offload_params) = segments;
      } else if (flag == "--offload-backend") {
        v.offload.backend = take();  // config/offload.py OffloadBackend: Literal["auto", "uva", "prefetch"]
        if (v.offload.backend != "auto" && v.offload.backend != "uva" && v.offload.backend != "prefetch")
          throw InputError(flag, "'" + v.offload.backend + "' is not accepted; accepted: auto, uva, prefetch");
      } else if (flag == "--offload-group-size") v.offload.group_size = number(flag, take(), 0, 1u << 20);  // int, ge=0
      else if (flag == "--offload-num-in-group") v.offload.num_in_group = number(flag, take(), 1, 1u << 20);  // int, ge=1
      else if (flag == "--offload-prefetch-step") v.offload.prefetch_step = number(flag, take(), 0, 1u << 20);  // int, ge=0
      else if (flag == "--enable-lora") enable_lora = true;
      else if (flag == "--max-loras") max_loras = parse_max_loras(take(), flag);
      else if (flag == "--max-lora-rank") v.lora.max_lora_rank = parse_max_lora_rank(take(), flag);
      else if (flag == "--lora-modules") {
        // NAME=PATH or JSON entries up to the next flag: the adapters vLLM loads at start, whose
        // adapter_config.json ranks must fit --max-lora-rank (vllm_lora_adapters.h).
        if (!value.empty()) v.lora.adapter_paths.push_back(vllm_lora_module_entry(value));
        while (i + 1 < w.size() && w[i + 1].rfind("--", 0) != 0) v.lora.adapter_paths.push_back(vllm_lora_module_entry(w[++i]));
      } else if (flag == "--max-cpu-loras" || flag == "--lora-dtype") take();
      else if (flag == "--fully-sharded-loras") r.notes.push_back("--fully-sharded-loras: LoRA slots taken unsharded (the larger figure)");
      else if (flag == "--speculative-config") r.serving_speculative = parse_vllm_speculative_config(take(), "--speculative-config");
      else r.notes.push_back("ignored " + ignored() + " (not mapped onto vLLM's memory budget)");
    }
  }
  if (serving) parallel.finish(r);
  if (r.engine == EngineKind::LlamaCpp && slots_auto) {
    // tools/server/server.cpp: "n_parallel is set to auto, using n_parallel = 4 and kv_unified = true".
    r.llamacpp.n_seq = 4;
    r.llamacpp.kv_unified = true;
    r.notes.push_back("no -np: llama-server's auto, 4 slots sharing one unified KV cache (-kvu)");
  }
  if (r.engine == EngineKind::Sglang) settle_sglang_draft(r.serving_speculative, sglang_draft, r.notes);
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
    // https://github.com/vllm-project/vllm/blob/main/vllm/config/offload.py
    // OffloadConfig.validate_offload_config: with the prefetch backend asked for
    // (or a group size given) num_in_group <= group_size and prefetch_step >= 1; the warnings when
    // both backends' fields are set, as notes.
    const VllmOffloadSettings& o = r.vllm.offload;
    const bool prefetch_fields = o.group_size > 0, uva_fields = r.vllm.cpu_offload_cap > 0;
    if (o.backend == "prefetch" || prefetch_fields) {
      if (o.num_in_group > o.group_size)
        throw InputError("--offload-num-in-group", fmt::format("{} must be <= --offload-group-size ({}), as vLLM's OffloadConfig requires with the "
                                                               "prefetch backend",
                                                               o.num_in_group, o.group_size));
      if (o.prefetch_step < 1) throw InputError("--offload-prefetch-step", "must be >= 1 when prefetch offloading is on (vLLM's OffloadConfig)");
    }
    if (o.backend == "uva" && prefetch_fields) r.notes.push_back("--offload-backend uva: the prefetch fields are set but ignored, as vLLM warns");
    else if (o.backend == "prefetch" && uva_fields) r.notes.push_back("--offload-backend prefetch: --cpu-offload-gb is set but ignored, as vLLM warns");
    else if (o.backend == "auto" && uva_fields && prefetch_fields)
      r.notes.push_back("--cpu-offload-gb and --offload-group-size both set: vLLM's auto backend picks prefetch and ignores --cpu-offload-gb");
    const bool prefetch = o.prefetch();
    if (prefetch && !o.cpu_offload_params.empty()) r.notes.push_back("--cpu-offload-params is the UVA backend's filter: ignored by the prefetch backend (--offload-params)");
    if (!prefetch && !o.offload_params.empty()) r.notes.push_back("--offload-params is the prefetch backend's filter: ignored by the UVA backend (--cpu-offload-params)");
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

void set_serving_context(EngineRun& run, uint64_t context) {
  run.vllm.kv.max_model_len = context;
  run.sglang.context_length = context;
}

}  // namespace vc
