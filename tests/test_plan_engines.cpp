// The engine command lines a plan prints: flags as llama.cpp, vLLM and SGLang document them.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "engines/engine.h"
#include "catalogue_entry.h"
#include "plan/box_inputs.h"
#include "plan/check.h"
#include "plan/engine_command.h"
#include "plan_fixtures.h"

using namespace vc;
using namespace vc::test;

namespace {
const EngineCommand& find(const std::vector<EngineCommand>& cmds, const std::string& engine) {
  for (const auto& c : cmds) if (c.engine == engine) return c;
  throw std::runtime_error("no command for " + engine);
}
bool has(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }
// Two 24 GB cards and 64 GB of RAM at 80 GB/s: short for a 61 GB BF16 model, room to offload it.
Box two_3090s_and_64gb() {
  Box box = box_of("3090x2");
  box.ram_bytes = 64'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  return box;
}
}  // namespace

TEST(PlanEngines, TensorParallelAcrossTwoNodes) {
  Scenario s;
  s.context = 1048576;
  PlanOptions o;
  o.split = SplitMode::Tensor;
  const Model& k3 = kimi_k3();
  const Plan p = make_plan(k3, s, box_of("B200x8", 2), o);
  const auto cmds = engine_commands(p);
  // vLLM: TP within a node, PP across nodes.
  EXPECT_TRUE(has(find(cmds, "vllm").command, "--tensor-parallel-size 8 --pipeline-parallel-size 2")) << find(cmds, "vllm").command;
  EXPECT_TRUE(has(find(cmds, "vllm").command, "--max-model-len 1048576"));
  EXPECT_TRUE(has(find(cmds, "sglang").command, "--tp 8 --pp-size 2"));
  EXPECT_TRUE(has(find(cmds, "sglang").command, "--nnodes 2"));
}

TEST(PlanEngines, ExpertParallelAndCacheDtype) {
  Scenario s;
  s.cache_dtype = "FP8_E4M3";
  s.sequences = 8;
  PlanOptions o;
  o.split = SplitMode::TensorExpert;
  const Plan p = make_plan(kimi_k3(), s, box_of("B200x16"), o);
  const auto cmds = engine_commands(p);
  EXPECT_TRUE(has(find(cmds, "vllm").command, "--tensor-parallel-size 16 --enable-expert-parallel"));
  EXPECT_TRUE(has(find(cmds, "vllm").command, "--kv-cache-dtype fp8"));
  EXPECT_TRUE(has(find(cmds, "vllm").command, "--max-num-seqs 8"));
  EXPECT_TRUE(has(find(cmds, "sglang").command, "--tp 16 --ep 16"));
}

TEST(PlanEngines, LlamaCppOffloadKeepsExpertsOnCpu) {
  Scenario s;
  s.quant = "UD-IQ1_S";
  s.sequences = 2;
  Box box = box_of("RTX 4090");
  box.ram_bytes = 768'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  const Plan p = make_plan(kimi_k3(), s, box, PlanOptions{});
  const auto& c = find(engine_commands(p), "llamacpp");
  // -c is the total over -np slots: 2 x 8,192.
  EXPECT_TRUE(has(c.command, "-c 16384 -np 2")) << c.command;
  EXPECT_TRUE(has(c.command, "-ngl 999"));
  EXPECT_TRUE(has(c.command, "--n-cpu-moe") || has(c.command, "-ot \"exps=CPU\"")) << c.command;
}

// The mmap note follows where this plan reads the weights from: a dense model held whole in RAM reads
// them from the page cache; over RAM with an SSD, the rest comes from the SSD each token (a dense
// model reads every weight per token, so nothing in it is "read most", unlike an MoE's experts).
TEST(PlanEngines, LlamaCppMmapNoteFollowsTheTiersAndTheModel) {
  Scenario s;
  s.quant = "Q4_K_M";  // Llama 3.1 70B: about 42.5 GB
  Box box = box_of("none");
  box.ram_bytes = 128'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  auto notes = [&](const Model& m, const Box& b) {
    std::string all;
    const auto cmds = engine_commands(make_plan(m, s, b, PlanOptions{}));
    for (const auto& n : find(cmds, "llamacpp").notes) all += n + "\n";
    return all;
  };
  const std::string in_ram = notes(llama_70b(), box);
  EXPECT_TRUE(has(in_ram, "read from the page cache in RAM")) << in_ram;
  EXPECT_FALSE(has(in_ram, "experts")) << in_ram;
  box.ram_bytes = 32'000'000'000;
  box.ssd_bandwidth = 7'000'000'000;
  const std::string over = notes(llama_70b(), box);
  EXPECT_TRUE(has(over, "the rest is read from SSD again every token")) << over;
  EXPECT_FALSE(has(over, "experts")) << over;
}

TEST(PlanEngines, AppleBoxGetsOnlyLlamaCpp) {
  Model m = llama_70b();
  Scenario s;
  s.quant = "Q4_K_M";
  const Plan p = make_plan(m, s, box_of("m3-max-128gb"), PlanOptions{});
  const auto cmds = engine_commands(p);
  ASSERT_EQ(cmds.size(), 1u);  // devices.json: Apple runs llamacpp and mlx
  EXPECT_EQ(cmds[0].engine, "llamacpp");
}

// A GGUF tier: llama.cpp loads the tier's own file; vLLM and SGLang, which serve safetensors, are not
// offered a command for a file they cannot load (issue 15: vLLM served the native checkpoint).
TEST(PlanEngines, GgufTierGetsOnlyLlamaCppWithItsFile) {
  Scenario s;
  s.quant = "UD-Q2_K_XL";
  const Plan p = make_plan(kimi_k3(), s, box_of("H200x8"), PlanOptions{});
  const auto cmds = engine_commands(p);
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_TRUE(has(cmds[0].command, "llama-server -m ") && has(cmds[0].command, "-UD-Q2_K_XL.gguf ")) << cmds[0].command;  // the build's own file
  EXPECT_TRUE(has(cmds[0].notes.back(), "vLLM and SGLang are not listed")) << cmds[0].notes.back();
  s.quant = "";  // the native checkpoint (1,795.87 GB at 8K) on 16 x 141 GB = 2,256 GB: all three engines
  EXPECT_EQ(engine_commands(make_plan(kimi_k3(), s, box_of("H200x8", 2), PlanOptions{})).size(), 3u);
}

// Weights streamed from SSD (K3's 1,560.94 GB native files on one 24 GiB card and 64 GB of RAM):
// no --cpu-offload-gb line, which would hold only the RAM share.
TEST(PlanEngines, SsdStreamingGetsNoVllmCommand) {
  Scenario s;
  Box box = box_of("RTX 4090");
  box.ram_bytes = 64'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  box.ssd_bandwidth = 5'000'000'000;
  const auto cmds = engine_commands(make_plan(kimi_k3(), s, box, PlanOptions{}));
  for (const auto& c : cmds) EXPECT_EQ(c.engine, "llamacpp");
}

// The -m comment names the file a synthesized tier needs, with the article its spoken name takes:
// "an IQ1_S" (eye), "a Q4_K_M" (queue).
TEST(PlanEngines, LlamaCppModelCommentReadsAsEnglish) {
  Scenario s;
  Box box = box_of("RTX 4090");
  box.ram_bytes = 128'000'000'000;
  box.ram_bandwidth = 80'000'000'000;
  const auto notes = [&](const std::string& quant) {
    s.quant = quant;
    const auto cmds = engine_commands(make_plan(llama_70b(), s, box, PlanOptions{}));
    std::string all;
    for (const auto& n : find(cmds, "llamacpp").notes) all += n + "\n";
    return all;
  };
  EXPECT_TRUE(has(notes("IQ1_S"), "-m: an IQ1_S GGUF of")) << notes("IQ1_S");
  EXPECT_TRUE(has(notes("Q4_K_M"), "-m: a Q4_K_M GGUF of")) << notes("Q4_K_M");
}

// With --engine vllm or sglang the figures are that engine's answer, so the command realises the
// same budget: vLLM at the gpu_memory_utilization the answer used (vLLM's default 0.9 here, not the
// rule's fraction), SGLang with mem_fraction_static left to SGLang as the answer assumed.
TEST(PlanEngines, EngineCommandsCarryTheFractionTheirAnswerUsed) {
  Scenario s;
  s.context = 32768;
  PlanOptions o;
  o.engine = EngineKind::Vllm;
  const Plan pv = make_plan(*Catalogue::builtin().find("llama-3.1-8b"), s, box_of("RTX 4090"), o);
  const auto vcmds = engine_commands(pv);
  EXPECT_TRUE(has(find(vcmds, "vllm").command, "--gpu-memory-utilization 0.90")) << find(vcmds, "vllm").command;
  o.engine = EngineKind::Sglang;
  const Plan ps = make_plan(*Catalogue::builtin().find("llama-3.1-8b"), s, box_of("RTX 4090"), o);
  const auto scmds = engine_commands(ps);
  const EngineCommand& sg = find(scmds, "sglang");
  EXPECT_FALSE(has(sg.command, "--mem-fraction-static")) << sg.command;
  bool noted = false;
  for (const auto& n : sg.notes) noted = noted || has(n, "SGLang chooses it from the card's memory");
  EXPECT_TRUE(noted);
}

// vLLM short on two 24 GB cards with 64 GB of RAM: the plan offloads the fewest whole GiB per GPU
// (--cpu-offload-gb N) with which vLLM's own answer fits, and the command carries that N. Minimal by
// construction: at N - 1 a GPU of the same answer is over (checked here by asking the engine).
TEST(PlanEngines, VllmShortOnGpusGetsTheLeastCpuOffloadItsAnswerFitsWith) {
  const Model& m = *Catalogue::builtin().find("qwen3-30b-a3b");  // 30.5B BF16: 61 GB, beyond 2 x 24 GB
  Scenario s;
  s.context = 32768;
  const Box box = two_3090s_and_64gb();
  PlanOptions o;
  o.engine = EngineKind::Vllm;
  const Plan p = make_plan(m, s, box, o);
  EXPECT_FALSE(p.fits_on_devices);
  ASSERT_TRUE(p.serving_offload.has_value());
  const ServingOffload& so = *p.serving_offload;
  ASSERT_TRUE(so.fits);
  const uint64_t gib = so.cap >> 30;
  ASSERT_EQ(so.cap, gib << 30);  // whole GiB, as the flag is typed
  ASSERT_GT(gib, 1u);
  // The same request one GiB lower: some GPU is over, so N is the least.
  EngineRequest r;
  r.model = &m;
  r.scenario = s;
  r.scenario.engine = EngineKind::Vllm;
  r.box = box;
  r.serving_cpu_offload_cap = (gib - 1) << 30;
  const EngineAnswer lower = run_engine(r);
  bool some_gpu_over = false;
  for (const auto& d : lower.devices) some_gpu_over = some_gpu_over || (d.name != "host" && !d.fits.value_or(true));
  EXPECT_TRUE(some_gpu_over);
  const auto cmds = engine_commands(p);
  EXPECT_TRUE(has(find(cmds, "vllm").command, fmt::format("--cpu-offload-gb {}", gib))) << find(cmds, "vllm").command;
  EXPECT_TRUE(has(p.verdict, fmt::format("--cpu-offload-gb {}, the fewest whole GiB per GPU that fits", gib))) << p.verdict;
}

// A pasted --cpu-offload-gb is what the figures were computed with: the printed command keeps it
// rather than the rule's RAM tier.
TEST(PlanEngines, PastedCpuOffloadStaysInTheCommand) {
  const Model& m = *Catalogue::builtin().find("qwen3-30b-a3b");  // 30.5B BF16: 61 GB, beyond 2 x 24 GB
  Scenario s;
  s.context = 32768;
  const Box box = two_3090s_and_64gb();
  BoxInputs in;
  in.engine_command = "vllm serve Qwen/Qwen3-30B-A3B -pp 2 --max-model-len 32768 --cpu-offload-gb 4";
  const Plan p = make_plan(m, s, box, in.to_options());
  const auto cmds = engine_commands(p);
  EXPECT_TRUE(has(find(cmds, "vllm").command, "--cpu-offload-gb 4")) << find(cmds, "vllm").command;
  EXPECT_FALSE(p.serving_offload.has_value());  // the user's offload, not the plan's
}

namespace {
// plan --engine sglang --split ep on four H100 SXM at 8K.
Plan sglang_ep_plan(const char* id, uint64_t sequences) {
  Scenario s;
  s.context = 8192;
  s.sequences = sequences;
  PlanOptions o;
  o.engine = EngineKind::Sglang;
  o.split = SplitMode::Expert;
  return make_plan(entry(id), s, box_of("H100 SXMx4"), o);
}
std::optional<SettingValue> setting(const EngineAnswer& a, const std::string& name) {
  for (const auto& st : a.settings)
    if (st.name == name) return st.value;
  return std::nullopt;
}
}  // namespace

// vLLM's answer in a plan is made for the command the plan prints: --max-num-seqs is the plan's
// sequences, and so is the max_num_seqs its profile uses. Qwen3-8B (36 layers) on an H100 at 3
// sequences: CUDA graph capture sizes up to min(2 x 3, 512, 8,192) = 6, so [1, 2, 4] piecewise
// and the full decode graphs of sizes up to 3, [1, 2] (vllm/config/vllm.py _set_cudagraph_sizes;
// cudagraph_dispatcher.py): 216 MiB + (3 + 2) x 36 layers x 174 KiB = 226,492,416 + 32,071,680 =
// 258,564,096 B (the constants of engines/vllm_graphs.h). vLLM's default of 1,024 would capture 67.
TEST(PlanEngines, VllmAnswerUsesTheCommandsMaxNumSeqs) {
  Scenario s;
  s.context = 8192;
  s.sequences = 3;
  PlanOptions o;
  o.engine = EngineKind::Vllm;
  const Plan p = make_plan(entry("qwen3-8b"), s, box_of("H100 SXM"), o);
  ASSERT_EQ(setting(p.engine, "max_num_seqs"), SettingValue(uint64_t{3}));
  EXPECT_TRUE(has(find(engine_commands(p), "vllm").command, "--max-num-seqs 3 ")) << find(engine_commands(p), "vllm").command;
  ASSERT_FALSE(p.engine.devices.empty());
  EXPECT_EQ(p.engine.devices.front().bytes(AllocKind::CudaGraphs), 258'564'096u);
}

// SGLang under plan's ep split runs DP attention on every rank, as the command it prints says
// (--tp 4 --dp 4 --ep 4 --enable-dp-attention), for a class SGLang builds on the attention group
// (models/qwen3_moe.py). Qwen3-30B-A3B then keeps all 4 KV heads on each rank: 48 layers x 4 heads
// x 128 x (K + V) x 2 B = 98,304 B a token in its pool, against 24,576 with the heads over TP 4.
// Each of the 4 schedulers takes max_running_requests // 4 requests (model_runner.py), so 2
// sequences ask --max-running-requests 4 (1 a scheduler), not 2 (0 each).
TEST(PlanEngines, SglangExpertSplitRunsDpAttentionAsItsCommandSays) {
  const Plan p = sglang_ep_plan("qwen3-30b-a3b", 2);
  EXPECT_EQ(setting(p.engine, "enable_dp_attention"), SettingValue(std::string("true")));
  EXPECT_EQ(setting(p.engine, "dp_size"), SettingValue(uint64_t{4}));
  EXPECT_EQ(setting(p.engine, "max_running_requests"), SettingValue(uint64_t{4}));
  ASSERT_TRUE(p.engine.kv_tokens.has_value());
  ASSERT_GT(*p.engine.kv_tokens, 0u);
  EXPECT_EQ(p.engine.devices.front().bytes(AllocKind::Kv), *p.engine.kv_tokens * 98'304u);
  const std::string cmd = find(engine_commands(p), "sglang").command;
  EXPECT_TRUE(has(cmd, "--tp 4 --dp 4 --ep 4 --enable-dp-attention")) << cmd;
  EXPECT_TRUE(has(cmd, "--max-running-requests 4")) << cmd;
}

// Mixtral's class keeps its attention on the whole TP group (models/mixtral.py MixtralAttention), so
// the ep split on SGLang is experts over the TP ranks: no --enable-dp-attention in the command and
// none in the answer, whose pool holds 32 layers x 8 KV heads / 4 ranks x 128 x 2 x 2 B = 32,768 B a token.
TEST(PlanEngines, SglangExpertSplitWithoutDpAttentionClassKeepsTensorParallelAttention) {
  const Plan p = sglang_ep_plan("mixtral-8x7b", 1);
  EXPECT_FALSE(setting(p.engine, "enable_dp_attention").has_value());
  ASSERT_TRUE(p.engine.kv_tokens.has_value());
  EXPECT_EQ(p.engine.devices.front().bytes(AllocKind::Kv), *p.engine.kv_tokens * 32'768u);
  const std::string cmd = find(engine_commands(p), "sglang").command;
  EXPECT_TRUE(has(cmd, "--tp 4 --ep 4 ")) << cmd;
  EXPECT_FALSE(has(cmd, "--enable-dp-attention")) << cmd;
  EXPECT_TRUE(has(cmd, "--max-running-requests 1")) << cmd;
}

// A pasted SGLang command without --max-running-requests is answered at SGLang's own choice (no
// setting in the answer), so the command plan prints writes none either, and says why; with one it
// passes the pasted value the answer used.
TEST(PlanEngines, PastedSglangCommandKeepsItsRunningRequests) {
  BoxInputs in;
  in.gpu = "H200x8";
  in.engine_command = "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --tp 8";
  Scenario s;
  s.sequences = 4;
  const Plan none = make_plan(entry("deepseek-v3"), s, in.to_box(), in.to_options());
  EXPECT_FALSE(setting(none.engine, "max_running_requests").has_value());
  const std::vector<EngineCommand> commands = engine_commands(none);
  const EngineCommand& c = find(commands, "sglang");
  EXPECT_FALSE(has(c.command, "--max-running-requests")) << c.command;
  bool said = false;
  for (const auto& n : c.notes) said = said || has(n, "--max-running-requests: not in the pasted command");
  EXPECT_TRUE(said);
  in.engine_command += " --max-running-requests 16";
  const Plan given = make_plan(entry("deepseek-v3"), s, in.to_box(), in.to_options());
  EXPECT_EQ(setting(given.engine, "max_running_requests"), SettingValue(uint64_t{16}));
  EXPECT_TRUE(has(find(engine_commands(given), "sglang").command, "--max-running-requests 16")) << find(engine_commands(given), "sglang").command;
}

// `check --engine vllm` on a box whose GPUs are short decides the offload row the way `plan` does:
// Qwen3-30B-A3B in BF16 (61 GB) on two 24 GB cards with 64 GB of RAM fits only with vLLM's
// --cpu-offload-gb, the least whole GiB plan's search finds; the row carries that answer.
TEST(PlanEngines, CheckOffloadRowIsThePlansVllmCpuOffload) {
  const Model& m = entry("qwen3-30b-a3b");
  Scenario s;
  s.context = 32768;
  s.quant = "BF16";
  const Box box = two_3090s_and_64gb();
  PlanOptions o;
  o.engine = EngineKind::Vllm;
  const CheckRow row = check_model(m, box, o, s);
  ASSERT_EQ(row.fit, FitKind::Offload) << row.note;
  ASSERT_TRUE(row.engine.has_value());
  const Plan p = make_plan(m, s, box, o);
  ASSERT_TRUE(p.serving_offload.has_value());
  ASSERT_TRUE(p.serving_offload->fits);
  EXPECT_EQ(row.engine->total_bytes, p.serving_offload->answer.total_bytes);
  EXPECT_EQ(row.kv_tokens, p.serving_offload->answer.kv_tokens);
  EXPECT_EQ(row.decode_tok_s, p.decode.expected_tok_s);
}

// vLLM under plan's ep split (--data-parallel-size 4 --enable-expert-parallel): four DP ranks of TP 1,
// each its own engine (engines/vllm_data_parallel.h). Qwen3-30B-A3B (Qwen/Qwen3-30B-A3B config.json:
// 48 layers, 128 experts of width 768, top 8, hidden 2,048, 4 KV heads of 128, BF16), worked by hand:
// - weights: the BF16 checkpoint 61,064,245,248 B less its routed experts, 48 x 128 x 3 x 2,048 x 768
//   x 2 B = 57,982,058,496 B, plus rank 0's 32 of 128 a layer, 14,495,514,624 B: 17,577,701,376 B;
// - the fused-MoE workspaces over the 4 ranks' 8,192 tokens gathered, 32,768 rows x top 8:
//   max(2 x 768, 2,048) x 2 B + 768 x 2 B a row-expert = 1,073,741,824 + 402,653,184 = 1,476,395,008 B;
// - each rank's scheduler takes ceil(10 / 4) = 3 sequences (--max-num-seqs 3 in the command), and
//   its cache holds every KV head: 48 x 2 x 4 x 128 x 2 B = 98,304 B a token; the engine's
//   concurrency is the 4 ranks' pools together.
TEST(PlanEngines, VllmExpertSplitRunsDataParallelRanks) {
  Scenario s;
  s.sequences = 10;
  PlanOptions o;
  o.engine = EngineKind::Vllm;
  o.split = SplitMode::Expert;
  const Plan p = make_plan(entry("qwen3-30b-a3b"), s, box_of("H200x4"), o);
  EXPECT_EQ(setting(p.engine, "tensor_parallel_size"), SettingValue(uint64_t{1}));
  EXPECT_EQ(setting(p.engine, "data_parallel_size"), SettingValue(uint64_t{4}));
  EXPECT_EQ(setting(p.engine, "max_num_seqs"), SettingValue(uint64_t{3}));
  const std::string cmd = find(engine_commands(p), "vllm").command;
  EXPECT_TRUE(has(cmd, "--data-parallel-size 4 --enable-expert-parallel")) << cmd;
  EXPECT_TRUE(has(cmd, "--max-num-seqs 3 ")) << cmd;
  ASSERT_EQ(p.engine.devices.size(), 4u);
  const DeviceAllocation& d = p.engine.devices[0];
  uint64_t weights = 0, activation = 0;
  std::string activation_formula;
  for (const auto& l : d.lines) {
    if (l.kind == AllocKind::Weights && l.label.rfind("Weights on this rank", 0) == 0) weights = l.bytes;
    if (l.kind == AllocKind::Activation) activation_formula = l.formula, activation = l.bytes;
  }
  EXPECT_EQ(weights, 17'577'701'376u);
  EXPECT_TRUE(has(activation_formula, "MoE workspace 1476395008 B")) << activation_formula;
  // The gathered input and output beyond the rank's own rows: 2 x 3 x 8,192 x 2,048 x 2 B.
  EXPECT_TRUE(has(activation_formula, "beyond the rank's own rows, 201326592 B")) << activation_formula;
  EXPECT_GT(activation, 1'476'395'008u);
  ASSERT_TRUE(p.engine.kv_tokens && p.engine.max_concurrency);
  EXPECT_DOUBLE_EQ(*p.engine.max_concurrency, 4.0 * static_cast<double>(*p.engine.kv_tokens) / 8192.0);
  bool said = false;
  for (const auto& n : p.engine.notes) said = said || has(n, "32 of the 128 routed experts of each MoE layer");
  EXPECT_TRUE(said);
}
