#pragma once
// Reading figures out of a pasted engine log without regular expressions: std::regex recurses
// once per character it matches, so a long line (a 60 KiB paste is one) overflows the stack.
// Every function here scans forward, within one line, in time linear in the text.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vc::log_text {

// A fixed piece of text; `space_optional`: one space may come before it ("12.5 GiB" or "12.5GiB").
// A piece that ends in a space also takes the spaces after it (llama.cpp's padded "=   62.81").
struct Lit {
  std::string_view text;
  bool space_optional = false;
};

// The numbers of the first place on one line where pieces[0] NUM pieces[1] NUM ... pieces[n]
// reads, NUM being a digit followed by digits, dots and commas ("1,024.5"); empty when none does.
std::vector<std::string> numbers(std::string_view text, const std::vector<Lit>& pieces);

// The single number between `before` and `after` (numbers({before, after})[0]), or "".
std::string number(std::string_view text, Lit before, Lit after);

// Every such number, in order (the same pattern read again after each match).
std::vector<std::string> every_number(std::string_view text, Lit before, Lit after);

// `key` in a printed Python dict ('key': value) or dataclass (key=value after "(", "," or " "):
// a quoted value without its quotes, else up to the next ",", "}" or ")" on the line; "" if absent.
std::string setting(std::string_view text, std::string_view key);

// "key   = value" as llama.cpp pads it: the value (a word or number) after `key`, one or more
// spaces and "= "; "" if absent.
std::string padded_value(std::string_view text, std::string_view key);

// The word characters ([A-Za-z0-9_]) between `before` and `after` on one line, first match; "" if none.
std::string word_between(std::string_view text, std::string_view before, std::string_view after);

}  // namespace vc::log_text
