#include "engines/tensor_pattern.h"

#include <re2/re2.h>

#include "core/error.h"

namespace vc {

TensorPattern::TensorPattern(const std::string& pattern, const std::string& flag) {
  RE2::Options options;
  options.set_log_errors(false);
  // A command carries up to 256 patterns: each may use 256 KiB for its program and DFA cache, so
  // all of them 64 MiB at most (the default, 8 MiB each, would allow 2 GiB). Real -ot patterns
  // need a few KiB; a larger one is refused as too large.
  options.set_max_mem(256 << 10);
  auto re = std::make_shared<const RE2>(pattern, options);
  if (!re->ok()) {
    throw InputError(flag, "'" + pattern + "' is not a regular expression we can match: " + re->error() +
                               " (backreferences and lookarounds are not accepted; groups, classes, alternation and repetition are)");
  }
  re_ = std::move(re);
}

bool TensorPattern::found_in(std::string_view name) const { return RE2::PartialMatch(name, *re_); }

}  // namespace vc
