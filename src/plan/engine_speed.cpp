#include "plan/engine_speed.h"

#include <fmt/format.h>

#include <algorithm>

#include "engines/engine_run.h"
#include "engines/sglang_weights.h"
#include "plan/engine_command.h"
#include "plan/serving_command.h"
#include "speed/speculative.h"
#include "speed/speculative_verify.h"
#include "speed/speed_bound.h"
#include "speed/speed_estimate.h"

namespace vc {
namespace {

Speed to_speed(const SpeedEstimate& e, double bound) {
  Speed s;
  s.expected_tok_s = e.tok_s;
  s.upper_tok_s = e.tok_s > 0 ? std::max(bound, e.tok_s) : 0;
  s.low_tok_s = e.low;
  s.high_tok_s = e.high;
  s.formula = e.formula;
  s.assumption = e.assumption;
  s.source = e.source;
  return s;
}

// The degrees a serving run's decode step reads by: attention and dense weights over the TP group
// that holds the sequence (SGLang's DP attention: tp / dp of it), routed experts over the EP group
// (vLLM --enable-expert-parallel: tp x dp ranks; SGLang --ep). Pipeline stages run in turn, so
// their reads add as one GPU's would.
struct ServingSpeedDegrees {
  uint32_t tensor_parallel = 1, expert_parallel = 1;
};

ServingSpeedDegrees serving_speed_degrees(const EngineRun& run) {
  const ServingParallel& par = run.parallel;
  const uint64_t dp = std::max<uint64_t>(1, par.data_parallel);
  const uint64_t tp = std::max<uint64_t>(1, command_tensor_parallel(run));
  ServingSpeedDegrees d;
  if (run.engine == EngineKind::Sglang) {
    d.tensor_parallel = static_cast<uint32_t>(par.dp_attention && dp > 1 ? std::max<uint64_t>(1, tp / dp) : tp);
    if (par.expert_parallel) d.expert_parallel = static_cast<uint32_t>(par.expert_parallel_size ? par.expert_parallel_size : tp);
  } else {
    d.tensor_parallel = static_cast<uint32_t>(tp);
    if (par.expert_parallel) d.expert_parallel = static_cast<uint32_t>(tp * dp);
  }
  return d;
}

}  // namespace

const DeviceAllocation* llamacpp_speed_host(const Plan& p) {
  if (p.options.engine != EngineKind::LlamaCpp) return nullptr;
  const auto& devices = p.llamacpp_offload && !p.fits_on_devices ? p.llamacpp_offload->answer.devices : p.engine.devices;
  for (const auto& d : devices) {
    if (d.name == "host") return &d;
  }
  return nullptr;
}

void apply_engine_speed(Plan& p, const Model& model) {
  if (p.options.engine == EngineKind::Rule) return;
  SpeedSettings s;
  uint32_t numa_isolated_from = 0;  // the --sockets a pasted --numa isolate narrowed to one
  s.engine = to_string(p.options.engine);
  s.experts_per_token = p.options.experts_per_token;
  s.sockets = p.options.sockets;
  s.threads = p.options.threads;
  s.depth = p.estimate.scenario.context;
  if (p.options.engine == EngineKind::LlamaCpp) {
    // The placement llama.cpp makes for the command this plan prints (or the one pasted).
    EngineRun run;
    if (p.options.command) {
      run = *p.options.command;
    } else {
      for (const auto& c : engine_commands(p)) {
        if (c.engine == "llamacpp") run = parse_engine_command(c.command);
      }
    }
    s.llamacpp = run.placement;
    if (run.llamacpp.n_ubatch) s.ubatch = run.llamacpp.n_ubatch;
    // --numa isolate (common/arg.cpp: "only spawn threads on CPUs on the node that execution started
    // on"): the threads read RAM through one socket's memory controllers whatever --sockets says.
    if (run.llamacpp_numa == "isolate" && s.sockets > 1) {
      numa_isolated_from = s.sockets;
      s.sockets = 1;
    }
    if (const DeviceAllocation* host = llamacpp_speed_host(p)) s.paged_out = host->paged_out();
  } else {
    // Short on the GPUs: the engine's speed where its own offload holds the rest (a pasted
    // --cpu-offload-gb, or the one the plan chose); otherwise the rule's offload figures stay.
    const bool offload_fits = p.serving_offload && p.serving_offload->fits;
    if (!p.fits_on_devices && !p.box.gpus.empty() && !offload_fits) return;
    std::optional<EngineRun> chosen;  // the run the plan's own split (and offload) answers for
    if (!p.options.command || !is_serving_command(*p.options.command)) {
      EngineRequest r;
      r.model = &model;
      r.scenario = p.estimate.scenario;
      r.box = p.box;
      r.split = p.options.split;
      chosen = engine_run_for(r);
      chosen->sglang.tensor_parallel = chosen->vllm.kv.tensor_parallel;  // engine_run_for fills vLLM's degrees, which SGLang's answer reads too
      chosen->sglang.pipeline_parallel = chosen->vllm.kv.pipeline_parallel;
      if (offload_fits) chosen->vllm.cpu_offload_cap = chosen->sglang.cpu_offload_cap = p.serving_offload->cap;
    }
    {
      const EngineRun& run = chosen ? *chosen : *p.options.command;
      const ServingSpeedDegrees d = serving_speed_degrees(run);
      s.tensor_parallel = d.tensor_parallel;
      s.expert_parallel = d.expert_parallel;
      // --cpu-offload-gb (and vLLM's prefetch offloader): what the offloader moves of a rank's layers
      // crosses its host link every forward pass (engines/serving_cpu_offload.h; speed/token_reads.h).
      const bool sglang = run.engine == EngineKind::Sglang;
      OffloadRule rule;
      if (sglang) rule.cap = run.sglang.cpu_offload_cap;
      else rule = vllm_offload_rule(run.vllm.cpu_offload_cap, run.vllm.offload);
      if (rule.on()) {
        const uint64_t pp = sglang ? run.sglang.pipeline_parallel : run.vllm.kv.pipeline_parallel;
        s.host_offloaded = sglang_rank_weights(model, resolve_weights(model, p.estimate.scenario.quant).bytes, s.tensor_parallel, pp,
                                               sglang ? run.sglang.dtype : run.vllm.kv.dtype,
                                               sglang && run.parallel.dp_attention ? run.parallel.data_parallel : 1, sglang && run.sglang.enable_dp_lm_head, rule,
                                               sglang ? run.sglang.moe_dense_tp_size : 0)
                               .offload.bytes;
        s.host_offload_copied = sglang || rule.prefetch();  // SGLang and vLLM's prefetch copy to the GPU; vLLM's UVA reads in place
        // A prefill pass computes the prompt up to the chunk the command sets; both engines'
        // defaults are at least 2,048 tokens, above the prompt (vllm_budget.h, sglang_profile.h).
        const int64_t chunk = sglang ? run.sglang.chunked_prefill_size.value_or(0) : static_cast<int64_t>(run.vllm.max_num_batched_tokens);
        if (chunk > 0) s.ubatch = std::min<uint64_t>(s.prompt, static_cast<uint64_t>(chunk));
        else s.ubatch = s.prompt;
      }
    }
  }
  const Speed rule_decode = p.decode;  // the verdict quotes it until the engine's replaces it
  const TokenReads decode_reads = token_reads(model, p.footprint, p.box, s);
  SpeedEstimate decode = decode_speed(decode_reads);
  double bound = bandwidth_bound_tok_s(decode_reads);
  std::string decode_label = "Decode speed (" + s.engine + ")";
  if (p.options.speculative && decode.tok_s > 0) {
    // Only when asked for (spec-* inputs, a pasted command's draft flags): E / (k x draft + verify).
    const SpeculativeSettings& spec = *p.options.speculative;
    const double plain = decode.tok_s;
    const double draft = drafter_seconds(spec, model, p.footprint, p.estimate.scenario, p.box, s, decode_reads, decode);
    decode = speculative_decode(verify_step(decode, p.footprint, decode_reads, spec.tokens + 1), draft, spec);
    bound *= decode.tok_s / plain;
    decode_label = fmt::format("Decode speed ({}, speculative {} k={})", s.engine, spec.method, spec.tokens);
  }
  p.decode = to_speed(decode, bound);
  if (numa_isolated_from) {
    p.decode.assumption += fmt::format("; --numa isolate keeps llama.cpp's threads on the node it started on: RAM is read at one socket's bandwidth, "
                                       "not the {} sockets given (--sockets)", numa_isolated_from);
  }
  SpeedSettings ps = s;
  ps.depth = 0;
  const TokenReads prefill_reads = token_reads(model, p.footprint, p.box, ps);
  p.prefill = to_speed(prefill_speed(prefill_reads), 0);
  p.prefill.upper_tok_s = p.prefill.expected_tok_s;
  // The lines and the verdict speak of the engine's figures: no Zipf hit rate, no rule tok/s.
  p.lines.erase(std::remove_if(p.lines.begin(), p.lines.end(), [](const Line& l) { return l.id == "plan.offload.hit_rate" || l.id == "plan.decode" || l.id == "plan.prefill"; }),
                p.lines.end());
  p.lines.push_back(Line{"plan.decode", decode_label, 0, p.decode.formula, p.decode.assumption, p.decode.source});
  p.lines.push_back(Line{"plan.prefill", "Prefill speed (" + s.engine + ")", 0, p.prefill.formula, p.prefill.assumption, p.prefill.source});
  if (rule_decode.expected_tok_s > 0) {
    const std::string old = "about " + speed_text_for(rule_decode, 2);
    if (const auto at = p.verdict.find(old); at != std::string::npos) p.verdict.replace(at, old.size(), "about " + speed_text_for(p.decode, 2));
  }
}

std::string speed_text_for(const Speed& s, int decimals) {
  if (s.expected_tok_s <= 0) return "unknown";
  if (s.low_tok_s <= 0) return fmt::format("{:.{}f} tok/s (estimate)", s.expected_tok_s, decimals);
  return fmt::format("{:.{}f} tok/s (estimate, likely {:.{}f}-{:.{}f})", s.expected_tok_s, decimals, s.low_tok_s, decimals, s.high_tok_s, decimals);
}

}  // namespace vc
