#pragma once
// Runs a probe program (nvidia-smi, sysctl) so that detection never hangs: no shell, stdin and
// stderr on /dev/null, at most `max_bytes` of its stdout kept, and the program killed once
// `timeout` has passed or it has written more than that. A program that is missing or fails
// gives what it wrote (often nothing).
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace vc {

std::string run_bounded(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, std::size_t max_bytes);

}  // namespace vc
