// A CUDA build of llama.cpp per buffer type (tests/data/llamacpp-cuda-measured.json: llama.cpp
// 80fb11ac on one H200, llama_get_memory_breakdown() per buffer type) against
// llamacpp_cuda_buffers and `vramcalc validate --measured`'s per-buffer comparison.
#include <gtest/gtest.h>

#include <string>

#include "engines/llamacpp_cuda_buffers.h"
#include "engines/llamacpp_measured.h"
#include "engines/llamacpp_placement.h"
#include "engines/llamacpp_profile.h"
#include "engines/validate.h"

using namespace vc;

namespace {

const std::string kCudaFile = std::string(VRAMCALC_TEST_DATA_DIR) + "/llamacpp-cuda-measured.json";

const MeasuredLlamaCpp& cuda() {
  static const MeasuredLlamaCpp m = read_llamacpp_measured(kCudaFile);
  return m;
}

const MeasuredLlamaCppCase& find_case(const std::string& id) {
  for (const auto& c : cuda().cases) if (c.id == id) return c;
  throw std::runtime_error("no case " + id);
}

}  // namespace

TEST(LlamaCppCudaBuffers, PerBufferFileReadsModelsFromTheCpuFileBesideIt) {
  // 580 cases over the 14 models of llamacpp-measured.json; buffers by llama.cpp's names.
  const auto& m = cuda();
  EXPECT_TRUE(m.per_buffer);
  EXPECT_EQ(m.models.size(), 14u);
  EXPECT_EQ(m.cases.size(), 580u);
  const auto& c = find_case("tiny-llama-q4|c256|np1|b2048|ub512|fa-on|k-f16|v-f16");
  EXPECT_EQ(c.n_gpu_layers, 999u);
  EXPECT_EQ(c.buffers.at("CUDA0").compute, 3150848u);     // as stored in the file
  EXPECT_EQ(c.buffers.at("CUDA_Host").compute, 990208u);
  EXPECT_EQ(c.buffers.at("CPU_Mapped").model, 262144u);
  const auto& ot = find_case("tiny-qwen3moe|c256|np1|b2048|ub512|fa-on|k-f16|v-f16|ot-exps|on");
  EXPECT_EQ(ot.override_tensor, "exps=CPU");
}

TEST(LlamaCppCudaBuffers, KvCacheOnTheDeviceOfItsLayer) {
  // tiny-llama-q4: 3 layers, 2 KV heads of 256 / 8 = 32 values, f16: K + V = 2 x 2 x 32 x 2 B =
  // 256 B per cell per layer; c256 -> 256 cells: 3 x 256 x 256 = 196,608 B on CUDA0 with every
  // layer offloaded (llama-kv-cache.cpp: each layer's tensors on that layer's device), all of it
  // in the host's "CPU" buffer with -ngl 1 (only the output layer offloaded).
  const Model& model = cuda().find("tiny-llama-q4")->model;
  LlamaCppSettings s;
  s.n_ctx = 256;
  LlamaCppPlacementSettings all;
  all.n_gpu_layers = 999;
  EXPECT_EQ(llamacpp_cuda_buffers(model, s, all).at("CUDA0").context, 196608u);
  LlamaCppPlacementSettings output_only;
  output_only.n_gpu_layers = 1;
  const auto host = llamacpp_cuda_buffers(model, s, output_only);
  EXPECT_EQ(host.at("CPU").context, 196608u);
  EXPECT_EQ(host.count("CUDA0") ? host.at("CUDA0").context : 0u, 0u);
}

TEST(LlamaCppCudaBuffers, ValidateComparesEveryBufferFittedAndSetAsideApart) {
  const auto rows = validate_measured(kCudaFile);
  bool cuda0_compute = false, host_compute = false, aside = false, fitted = false;
  for (const auto& r : rows) {
    if (r.case_id != "tiny-llama-q4|c256|np1|b2048|ub512|fa-on|k-f16|v-f16") {
      aside |= r.part == "set-aside";
      fitted |= r.part == "fitted";
      continue;
    }
    if (r.figure == "cuda CUDA0 compute (full offload)") cuda0_compute = r.printed == 3150848;
    if (r.figure == "cuda CUDA_Host compute (full offload)") host_compute = r.printed == 990208;
    if (r.figure == "cuda CUDA0 context (full offload)") {
      EXPECT_TRUE(r.met) << r.ours;
    }
  }
  EXPECT_TRUE(cuda0_compute);
  EXPECT_TRUE(host_compute);
  EXPECT_TRUE(aside && fitted);
}
