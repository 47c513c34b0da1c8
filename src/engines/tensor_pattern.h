#pragma once
// A llama.cpp tensor-override pattern (-ot REGEX=BUFFER; llama.cpp searches each tensor's name with
// std::regex, ECMAScript). We match it with RE2, whose time is linear in the name whatever the
// pattern, so a pasted command cannot make a plan hang on backtracking ("(.*)*x" took minutes with
// std::regex). The common syntax of the two (classes, groups, alternation, repetition, \d \w \.)
// means the same; what RE2 lacks (backreferences, lookaround) is refused with the reason.
#include <memory>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace vc {

class TensorPattern {
 public:
  // InputError naming `flag` when RE2 cannot compile the pattern.
  TensorPattern(const std::string& pattern, const std::string& flag);
  // Whether the pattern occurs anywhere in the name (std::regex_search's sense).
  bool found_in(std::string_view name) const;

 private:
  std::shared_ptr<const re2::RE2> re_;
};

}  // namespace vc
