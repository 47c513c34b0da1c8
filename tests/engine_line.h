#pragma once
// End-to-end: the JSON of one engine line, as the CLI prints it (for a catalogue model or a pasted config.json).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace vc::testing {

// The first line on the first device of `vramcalc ARGS` (a --json estimate with an engine) whose
// `field` is `value`, or null (with a test failure) when the run fails or prints no such line.
inline nlohmann::json engine_line(const std::string& args, const std::string& field, const std::string& value) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return nullptr;
  const nlohmann::json j = nlohmann::json::parse(r.output);  // kept: the loop reads into it
  for (const auto& l : j["engine"]["devices"][0]["lines"]) {
    if (l[field] == value) return l;
  }
  ADD_FAILURE() << "no line with " << field << " " << value << " in: " << r.output;
  return nullptr;
}

// `vramcalc estimate CONFIG --engine vllm --gpu H100-sxm --json` on `config` written to a folder
// named `name` in the test's temporary directory: the first line of `kind` on the first device, or
// null (with a test failure) when the run fails or prints no such line.
inline nlohmann::json vllm_h100_line(const nlohmann::json& config, const std::string& name, const std::string& kind) {
  const std::string dir = ::testing::TempDir() + name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << config.dump();
  return engine_line("estimate " + dir + "/config.json --engine vllm --gpu H100-sxm --json", "kind", kind);
}

}  // namespace vc::testing
