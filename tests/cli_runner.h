#pragma once
// Runs the built vramcalc binary (VRAMCALC_BINARY) for end-to-end tests.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

inline CliResult run_cli(const std::string& args) {
  CliResult r;
  std::string cmd = std::string(VRAMCALC_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
