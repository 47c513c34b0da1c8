// Hostile checkpoint files: every malformed value is the reader's InputError naming the file and
// field (CLI exit 2), never an internal error (exit 1) or a crash. Inputs are generated here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "cli_runner.h"
#include "core/error.h"
#include "core/printable.h"
#include "gguf_writer.h"
#include "sources/checkpoint.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"

namespace {

namespace fs = std::filesystem;
using vc::InputError;
using vc::testing::GgufWriter;

// A folder for one test's files, removed at the end.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("vc-sec-readers-" + std::to_string(::getpid()) + "-" +
                                               ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

// A 1-layer llama GGUF with `heads` query heads and `kv` KV heads, named `name`.
fs::path gguf_with_heads(const fs::path& dir, uint32_t heads, uint32_t kv, const std::string& name = "tiny") {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.str("general.name", name);
  w.u32("llama.block_count", 1);
  w.u32("llama.embedding_length", 64);
  w.u32("llama.attention.head_count", heads);
  w.u32("llama.attention.head_count_kv", kv);
  w.tensor("blk.0.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.tensor("blk.0.attn_k.weight", {64, 32}, GgufWriter::F16, 4096);
  w.tensor("blk.0.attn_v.weight", {64, 32}, GgufWriter::F16, 4096);
  const fs::path p = dir / "model.gguf";
  w.write(p);
  return p;
}

// A llama config whose hidden_size is `hidden` (written as given, so any JSON number text fits).
std::string llama_config(const std::string& hidden) {
  return R"({"model_type": "llama", "hidden_size": )" + hidden +
         R"(, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "intermediate_size": 128, "vocab_size": 1000, "max_position_embeddings": 4096})";
}

// 1e505 is beyond the largest double (about 1.8e308): nlohmann's parser throws out_of_range 406,
// which parse_config_text must turn into an InputError naming the field it was reading.
TEST(SecurityReaders, NumberBeyondDoubleRangeNamesTheField) {
  try {
    (void)vc::parse_config_text(llama_config("1e505"), "t/config.json");
    FAIL() << "a number beyond the double range was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.subject(), "t/config.json: hidden_size");
    EXPECT_NE(std::string(e.what()).find("64-bit float"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)vc::parse_config_text(llama_config("-1e505"), "t/config.json"), InputError);
}

// A value that parses but is beyond what the mapper accepts stays the mapper's InputError.
TEST(SecurityReaders, HugeButFiniteNumberIsRefusedByTheMapper) {
  auto doc = vc::parse_config_text(llama_config("1e300"), "t/config.json");
  EXPECT_THROW((void)vc::model_from_config(doc, "t/config.json"), InputError);
  // 2^64 as a float (18446744073709551616) is refused before any conversion to a 64-bit integer,
  // which would be undefined for it (found by the config fuzzer), naming the accepted range.
  try {
    (void)vc::model_from_config(vc::parse_config_text(llama_config("1.8446744073709552e19"), "t/config.json"), "t/config.json");
    FAIL() << "2^64 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("accepted: 0 to"), std::string::npos) << e.what();
  }
}

// End to end: the CLI exits 2 (bad input) naming the field, not 1 ("internal error").
TEST(SecurityReaders, CliExitsTwoOnOutOfRangeNumber) {
  const fs::path dir = fs::temp_directory_path() / ("vc-sec-readers-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << llama_config("1e505");
  CliResult r = run_cli("inspect " + (dir / "config.json").string());
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("hidden_size"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

// head_count_kv above head_count (a 256-parameter file once got 67 GB of KV) or 0 on a layer
// that holds attention tensors is refused, naming the key.
TEST(SecurityReaders, GgufKvHeadsOutsideOneToHeadCountAreRefused) {
  TempDir d;
  EXPECT_NO_THROW((void)vc::inspect_checkpoint(gguf_with_heads(d.path, 4, 2).string()));
  for (uint32_t kv : {0u, 5u, 4096u}) {
    try {
      (void)vc::inspect_checkpoint(gguf_with_heads(d.path, 4, kv).string());
      ADD_FAILURE() << "head_count_kv " << kv << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(e.subject().find("head_count_kv"), std::string::npos) << e.what();
    }
  }
}

// general.name with a newline and an escape sequence cannot forge report lines or drive the
// terminal: every text face shows it escaped.
TEST(SecurityReaders, ControlCharactersInNamesAreEscaped) {
  TempDir d;
  const fs::path file = gguf_with_heads(d.path, 4, 2, "evil\nFits: YES\x1b[2J");
  const auto c = vc::inspect_checkpoint(file.string());
  ASSERT_TRUE(c.model);
  EXPECT_EQ(c.model->name, "evil\\nFits: YES\\x1b[2J");
  for (const auto& [k, v] : c.metadata) EXPECT_EQ(v.find('\x1b'), std::string::npos) << k;
  CliResult r = run_cli("inspect " + file.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.output.find("\nFits: YES"), std::string::npos) << r.output;
  EXPECT_EQ(vc::printable("a\xc2\x9b" "b"), "a\\u009bb");  // a C1 control (CSI) in UTF-8
  EXPECT_EQ(vc::printable("Grüße"), "Grüße");
}

// Two tensors of one name in a safetensors header (JSON keeps the last, hiding the first).
TEST(SecurityReaders, DuplicateSafetensorsNamesAreRefused) {
  TempDir d;
  const std::string header = R"({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}, "a": {"dtype": "F16", "shape": [2], "data_offsets": [4, 8]}})";
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  bytes += header + std::string(8, '\0');
  std::ofstream(d.path / "model.safetensors", std::ios::binary) << bytes;
  try {
    (void)vc::inspect_checkpoint((d.path / "model.safetensors").string());
    FAIL() << "a duplicate tensor name was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("twice"), std::string::npos) << e.what();
  }
}

}  // namespace
