#pragma once
// End-to-end: the JSON of one engine line for a pasted config.json, as the CLI prints it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace vc::testing {

// `vramcalc estimate CONFIG --engine vllm --gpu H100-sxm --json` on `config` written to a folder
// named `name` in the test's temporary directory: the first line of `kind` on the first device, or
// null (with a test failure) when the run fails or prints no such line.
inline nlohmann::json vllm_h100_line(const nlohmann::json& config, const std::string& name, const std::string& kind) {
  const std::string dir = ::testing::TempDir() + name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/config.json") << config.dump();
  const CliResult r = run_cli("estimate " + dir + "/config.json --engine vllm --gpu H100-sxm --json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return nullptr;
  const nlohmann::json j = nlohmann::json::parse(r.output);  // kept: the loop reads into it
  for (const auto& l : j["engine"]["devices"][0]["lines"]) {
    if (l["kind"] == kind) return l;
  }
  ADD_FAILURE() << "no " << kind << " line in: " << r.output;
  return nullptr;
}

}  // namespace vc::testing
