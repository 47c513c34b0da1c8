// Reading figures out of a pasted engine log (engines/log_text.h, engines/engine_log.h): the
// patterns llama.cpp, vLLM and SGLang print, and lines long enough that a regular expression
// recursing per character overflowed the stack (a segmentation fault before 2026-12-06).
#include <gtest/gtest.h>

#include "core/error.h"
#include "engines/engine_log.h"
#include "engines/log_text.h"

using namespace vc;
using namespace vc::log_text;

namespace {

TEST(LogText, NumbersBetweenPieces) {
  EXPECT_EQ(number("INFO Model loading took 14.99 GiB memory", {"Model loading took "}, {"GiB", true}), "14.99");
  EXPECT_EQ(number("Model loading took 14.99GiB", {"Model loading took "}, {"GiB", true}), "14.99");
  EXPECT_EQ(number("Model loading took 14.99 MiB", {"Model loading took "}, {"GiB", true}), "");
  EXPECT_EQ(numbers("Requested memory: 0.950000 (util), 75.23 GiB", {{"Requested memory: "}, {" (util), "}, {"GiB", true}}),
            (std::vector<std::string>{"0.950000", "75.23"}));
  EXPECT_EQ(number("GPU KV cache size: 1,075,312 tokens", {"GPU KV cache size: "}, {" tokens"}), "1,075,312");
  // A piece ending in a space takes llama.cpp's padding; the first place that reads wins, on its line.
  EXPECT_EQ(every_number("a: CUDA0 KV buffer size =  2304.00 MiB\nb: CUDA1 KV buffer size =   12.50 MiB\n", {"KV buffer size = "}, {" MiB"}),
            (std::vector<std::string>{"2304.00", "12.50"}));
  EXPECT_EQ(number("size = 1\n MiB", {"size = "}, {" MiB"}), "");  // never across a line break
}

TEST(LogText, SettingsAsPythonPrintsThem) {
  const std::string vllm = "non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192, 'enable_prefix_caching': False}";
  EXPECT_EQ(setting(vllm, "model"), "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(setting(vllm, "max_model_len"), "8192");
  const std::string sglang = "server_args=ServerArgs(model_path='/m/QwQ-32B', tp_size=4, mem_fraction_static=0.85, max_running_requests=None)";
  EXPECT_EQ(setting(sglang, "model_path"), "/m/QwQ-32B");
  EXPECT_EQ(setting(sglang, "tp_size"), "4");
  EXPECT_EQ(setting(sglang, "max_running_requests"), "None");
  EXPECT_EQ(setting(sglang, "size"), "");  // "tp_size=" is another key
  EXPECT_EQ(padded_value("llama_context: n_ctx         = 16384\nllama_context: n_ctx_per_seq = 4096", "n_ctx"), "16384");
  EXPECT_EQ(padded_value("llama_context: flash_attn    = auto", "flash_attn"), "auto");
  EXPECT_EQ(word_between("K (q8_0):  612.00 MiB, V (f16): 1152.00 MiB", "V (", "):"), "f16");
}

// llama.cpp prints each device's cache buffer and then a total of them; the cache is the buffers
// (2,304 MiB here), not both (before 2026-12-06 the reader added them: 4,608 MiB).
TEST(LogText, LlamaCppCacheIsItsBuffersOnce) {
  const std::string log =
      "llama_context: n_seq_max     = 4\n"
      "llama_context: n_ctx         = 16384\n"
      "llama_context: n_ubatch      = 512\n"
      "llama_kv_cache:      CUDA0 KV buffer size =  2304.00 MiB\n"
      "llama_kv_cache: size = 2304.00 MiB ( 16384 cells,  36 layers,  4/4 seqs), K (q8_0):  612.00 MiB, V (f16): 1152.00 MiB\n"
      "llama_context:      CUDA0 compute buffer size =   304.75 MiB\n"
      "llama_context:  CUDA_Host compute buffer size =    40.01 MiB\n";
  const EngineLog l = parse_engine_log(log);
  EXPECT_EQ(l.engine, "llamacpp");
  EXPECT_DOUBLE_EQ(l.printed.at("kv_mib"), 2304.0);
  EXPECT_DOUBLE_EQ(l.printed.at("compute_mib"), 304.75 + 40.01);
  EXPECT_EQ(l.run.llamacpp.n_ctx, 16384u);
  EXPECT_EQ(l.run.llamacpp.n_seq, 4u);
  EXPECT_EQ(l.run.llamacpp.type_k, "Q8_0");
  EXPECT_EQ(l.run.llamacpp.type_v, "F16");
  // An excerpt with the total alone (llama.cpp issue 25721's hybrid model): the total.
  const EngineLog excerpt = parse_engine_log("llama_kv_cache: size = 1440.00 MiB (262144 cells,  10 layers,  1/1 seqs), K (q4_0):  720.00 MiB, V (q4_0):  720.00 MiB\n");
  EXPECT_DOUBLE_EQ(excerpt.printed.at("kv_mib"), 1440.0);
}

TEST(LogText, LongLinesAreReadNotCrashedOn) {
  const std::string long_line(61000, 'a');
  EXPECT_THROW(parse_engine_log("llama_context: n_ctx = 4096\nllama_model_loader: loaded meta data with " + long_line + "\n"), InputError);
  const EngineLog sglang = parse_engine_log("Load weight end. " + long_line + " mem usage=3.76 GB, avail mem=19.08 GB\nKV Cache is allocated. #tokens: 5\n");
  EXPECT_DOUBLE_EQ(sglang.printed.at("weights_gib"), 3.76);
  EXPECT_DOUBLE_EQ(sglang.printed.at("kv_tokens"), 5);
}

// Found by fuzz/fuzz_engine_log.cpp: "n_ctx = INFO" read as infinity and converted to an integer
// (undefined). A count no engine could print is refused instead.
TEST(LogText, CountsNoEngineCouldPrintAreRefused) {
  const std::string kv = "llama_kv_cache: size = 1.00 MiB (1 cells)\n";
  EXPECT_THROW(parse_engine_log("llama_context: n_ctx = INFO\n" + kv), InputError);
  EXPECT_THROW(parse_engine_log("llama_context: n_ctx = 1e300\n" + kv), InputError);
  EXPECT_THROW(parse_engine_log("server_args=ServerArgs(tp_size=-4)\nKV Cache is allocated. #tokens: 5\n"), InputError);
  // A setting that is no number at all (a garbled line) is refused too, not read as 0 (a TP of 0
  // then divided a share by zero: found by the same harness).
  EXPECT_THROW(parse_engine_log("non-default args: {'tensor_parallel_size': ng_requests}\nGPU KV cache size: 5 tokens\n"), InputError);
  const EngineLog plain = parse_engine_log("llama_context: n_ctx = 4096\n" + kv);
  EXPECT_EQ(plain.run.llamacpp.n_ctx, 4096u);
  EXPECT_EQ(plain.run.llamacpp.type_k, "F16");  // no "K (type):" printed: llama.cpp's default stays
  EXPECT_EQ(plain.run.llamacpp.type_v, "F16");
}

}  // namespace
