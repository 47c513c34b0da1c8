#include "engines/log_text.h"

#include <cctype>

namespace vc::log_text {
namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Where `lit` ends when it reads at `at`, or npos. A piece that ends in a space takes every space
// that follows (llama.cpp pads its figures: "size =   62.81 MiB").
std::size_t after_lit(std::string_view text, std::size_t at, Lit lit) {
  std::size_t end = std::string_view::npos;
  if (lit.space_optional && at < text.size() && text[at] == ' ' && text.substr(at + 1, lit.text.size()) == lit.text) end = at + 1 + lit.text.size();
  else if (text.substr(at, lit.text.size()) == lit.text) end = at + lit.text.size();
  if (end != std::string_view::npos && !lit.text.empty() && lit.text.back() == ' ')
    while (end < text.size() && text[end] == ' ') ++end;
  return end;
}

// Where a number starting at `at` ends, or npos when none starts there.
std::size_t after_number(std::string_view text, std::size_t at) {
  if (at >= text.size() || !digit(text[at])) return std::string_view::npos;
  std::size_t end = at + 1;
  while (end < text.size() && (digit(text[end]) || text[end] == '.' || text[end] == ',')) ++end;
  return end;
}

// Tries the pattern with pieces[0] at `at`: the numbers and where the match ends.
std::optional<std::pair<std::vector<std::string>, std::size_t>> match_at(std::string_view text, std::size_t at, const std::vector<Lit>& pieces) {
  std::vector<std::string> found;
  std::size_t pos = after_lit(text, at, pieces[0]);
  for (std::size_t i = 1; i < pieces.size() && pos != std::string_view::npos; ++i) {
    const std::size_t end = after_number(text, pos);
    if (end == std::string_view::npos) return std::nullopt;
    // "1,024." reads as 1,024 when the next piece starts with the dot or comma it swallowed.
    std::size_t stop = end;
    while (stop > pos + 1 && after_lit(text, stop, pieces[i]) == std::string_view::npos && (text[stop - 1] == '.' || text[stop - 1] == ',')) --stop;
    found.emplace_back(text.substr(pos, stop - pos));
    pos = after_lit(text, stop, pieces[i]);
  }
  if (pos == std::string_view::npos) return std::nullopt;
  return std::pair{found, pos};
}

std::optional<std::pair<std::vector<std::string>, std::size_t>> search(std::string_view text, std::size_t from, const std::vector<Lit>& pieces) {
  if (pieces.empty() || pieces[0].text.empty()) return std::nullopt;
  // No piece holds a line break and numbers hold none, so a match never leaves its line.
  for (std::size_t at = text.find(pieces[0].text, from); at != std::string_view::npos; at = text.find(pieces[0].text, at + 1)) {
    if (auto m = match_at(text, at, pieces)) return m;
  }
  return std::nullopt;
}

// The value after `at` up to a quote (when it opens with one) or one of `stops` or the line's end.
std::string value_at(std::string_view text, std::size_t at, std::string_view stops) {
  if (at < text.size() && text[at] == '\'') {
    const std::size_t close = text.find_first_of("'\n", at + 1);
    if (close != std::string_view::npos && text[close] == '\'') return std::string(text.substr(at + 1, close - at - 1));
  }
  std::size_t end = at;
  while (end < text.size() && text[end] != '\n' && stops.find(text[end]) == std::string_view::npos) ++end;
  return std::string(text.substr(at, end - at));
}

}  // namespace

std::vector<std::string> numbers(std::string_view text, const std::vector<Lit>& pieces) {
  auto m = search(text, 0, pieces);
  return m ? m->first : std::vector<std::string>{};
}

std::string number(std::string_view text, Lit before, Lit after) {
  const auto found = numbers(text, {before, after});
  return found.empty() ? std::string() : found[0];
}

std::vector<std::string> every_number(std::string_view text, Lit before, Lit after) {
  std::vector<std::string> out;
  for (auto m = search(text, 0, {before, after}); m; m = search(text, m->second, {before, after})) out.push_back(m->first[0]);
  return out;
}

std::string setting(std::string_view text, std::string_view key) {
  const std::string dict = "'" + std::string(key) + "': ";
  if (const std::size_t at = text.find(dict); at != std::string_view::npos) {
    std::string v = value_at(text, at + dict.size(), ",}");
    if (!v.empty()) return v;
  }
  const std::string kv = std::string(key) + "=";
  for (std::size_t at = text.find(kv); at != std::string_view::npos; at = text.find(kv, at + 1)) {
    if (at == 0 || (text[at - 1] != '(' && text[at - 1] != ',' && text[at - 1] != ' ')) continue;
    std::string v = value_at(text, at + kv.size(), ",)");
    if (!v.empty()) return v;
  }
  return "";
}

std::string padded_value(std::string_view text, std::string_view key) {
  for (std::size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    std::size_t pos = at + key.size();
    if (pos >= text.size() || text[pos] != ' ') continue;
    while (pos < text.size() && text[pos] == ' ') ++pos;
    if (text.substr(pos, 2) != "= ") continue;
    pos += 2;
    std::size_t end = pos;
    while (end < text.size() && (word(text[end]) || ((text[end] == '.' || text[end] == ',') && digit(text[pos])))) ++end;
    if (end > pos) return std::string(text.substr(pos, end - pos));
  }
  return "";
}

std::string word_between(std::string_view text, std::string_view before, std::string_view after) {
  for (std::size_t at = text.find(before); at != std::string_view::npos; at = text.find(before, at + 1)) {
    std::size_t end = at + before.size();
    while (end < text.size() && word(text[end])) ++end;
    if (end > at + before.size() && text.substr(end, after.size()) == after) return std::string(text.substr(at + before.size(), end - at - before.size()));
  }
  return "";
}

}  // namespace vc::log_text
