// -ot patterns (engines/tensor_pattern.h): matched as llama.cpp's std::regex_search matches them,
// in linear time. The nested and repeated wildcards below made std::regex backtrack for minutes
// on a 30-character tensor name (a pasted command could hang a plan and a server thread).
#include <gtest/gtest.h>

#include "core/error.h"
#include "engines/tensor_pattern.h"

using namespace vc;

namespace {

TEST(TensorPattern, SearchesAsLlamaCppDoes) {
  // Patterns from llama.cpp's docs and users' commands: a search anywhere in the name.
  EXPECT_TRUE(TensorPattern("exps", "-ot").found_in("blk.12.ffn_up_exps.weight"));
  EXPECT_TRUE(TensorPattern(R"(blk\.(1[0-9]|2[0-9])\.ffn_.*_exps)", "-ot").found_in("blk.17.ffn_gate_exps.weight"));
  EXPECT_FALSE(TensorPattern(R"(blk\.(1[0-9]|2[0-9])\.ffn_.*_exps)", "-ot").found_in("blk.7.ffn_gate_exps.weight"));
  EXPECT_TRUE(TensorPattern(R"(\.ffn_(up|down|gate)_exps\.)", "-ot").found_in("blk.0.ffn_down_exps.weight"));
  EXPECT_FALSE(TensorPattern("^exps", "-ot").found_in("blk.0.ffn_down_exps.weight"));
}

TEST(TensorPattern, BacktrackingPatternsAnswer) {
  const std::string name = "blk.47.ffn_gate_exps.weight_x";  // 29 characters, no 'q'
  EXPECT_FALSE(TensorPattern("(.*)*(.*)*(.*)*q", "-ot").found_in(name));
  EXPECT_FALSE(TensorPattern(".*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*.*q", "-ot").found_in(name));
  EXPECT_TRUE(TensorPattern("(.*)*(.*)*(.*)*x$", "-ot").found_in(name));
}

TEST(TensorPattern, WhatRe2CannotMatchIsRefusedByName) {
  try {
    TensorPattern(R"((a)\1)", "-ot");
    FAIL() << "a backreference was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.subject(), "-ot");
    EXPECT_NE(std::string(e.what()).find("backreferences"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TensorPattern("(unclosed", "-ot"), InputError);
  // Counted repetition expands: 1,000 x 1,000 copies is over the 256 KiB a pattern may take.
  EXPECT_THROW(TensorPattern("((a{1000}){1000})", "-ot"), InputError);
}

}  // namespace
