#include "core/units.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "core/checked.h"
#include "core/error.h"

namespace vc {
namespace {

// An exact decimal number as numerator / 10^scale, bounded to 18 significant digits.
struct Decimal {
  uint64_t numerator = 0;
  uint64_t denominator = 1;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Commas are accepted only as thousands separators of the integer part ("1,048,576"), so a
// list like "1,2" is never read as twelve.
bool commas_well_placed(std::string_view text) {
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == ',')) ++end;
  std::string_view integer = text.substr(0, end);
  if (integer.find(',') == std::string_view::npos) return true;
  size_t group_start = 0;
  bool first = true;
  while (true) {
    size_t comma = integer.find(',', group_start);
    size_t len = (comma == std::string_view::npos ? integer.size() : comma) - group_start;
    if (first ? (len == 0 || len > 3) : len != 3) return false;  // 1-3 digits first, then groups of 3
    if (comma == std::string_view::npos) return true;
    group_start = comma + 1;
    first = false;
  }
}

// Splits "1.5M" into the number "1.5" and the suffix "M". Returns false on a malformed number.
bool split_number(std::string_view text, Decimal& out, std::string_view& suffix) {
  if (!commas_well_placed(text)) return false;
  size_t i = 0;
  int digits = 0;
  bool seen_point = false;
  uint64_t num = 0;
  uint64_t den = 1;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == ',') continue;  // thousands separator, checked above
    if (c == '.') {
      if (seen_point) return false;
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (++digits > 18) return false;
    num = num * 10 + static_cast<uint64_t>(c - '0');
    if (seen_point) den *= 10;
  }
  if (digits == 0) return false;
  out = {num, den};
  suffix = trim(text.substr(i));
  return true;
}

std::string upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

// value * multiplier, which must be a whole number.
bool exact_scale(const Decimal& d, uint64_t multiplier, uint64_t& out) {
  u128 p = static_cast<u128>(d.numerator) * multiplier;
  if (p % d.denominator != 0) return false;
  p /= d.denominator;
  if (p > UINT64_MAX) return false;
  out = static_cast<uint64_t>(p);
  return true;
}

// value * multiplier rounded down; false when it does not fit in 64 bits.
bool floor_scale(const Decimal& d, uint64_t multiplier, uint64_t& out) {
  u128 p = static_cast<u128>(d.numerator) * multiplier / d.denominator;
  if (p > UINT64_MAX) return false;
  out = static_cast<uint64_t>(p);
  return true;
}

}  // namespace

uint64_t parse_tokens(std::string_view raw, const std::string& subject) {
  const std::string accepted =
      "accepted: a whole number of tokens such as 8192, or K/M suffixes (32K = 32,768; 1M = 1,048,576), "
      "from 1 to " + format_tokens(kMaxContextTokens);
  std::string_view text = trim(raw);
  if (!text.empty() && text.front() == '-') throw InputError(subject, "'" + std::string(raw) + "' is negative; " + accepted);
  Decimal d;
  std::string_view suffix;
  if (!split_number(text, d, suffix)) throw InputError(subject, "'" + std::string(raw) + "' is not a token count; " + accepted);
  std::string s = upper(suffix);
  uint64_t multiplier = 1;
  if (s.empty()) multiplier = 1;
  else if (s == "K") multiplier = 1024;
  else if (s == "M") multiplier = 1024 * 1024;
  else if (s == "G") multiplier = uint64_t{1} << 30;
  else throw InputError(subject, "unknown suffix '" + std::string(suffix) + "' in '" + std::string(raw) + "'; " + accepted);
  uint64_t tokens = 0;
  if (!exact_scale(d, multiplier, tokens)) throw InputError(subject, "'" + std::string(raw) + "' is not a whole number of tokens; " + accepted);
  if (tokens == 0 || tokens > kMaxContextTokens) throw InputError(subject, "'" + std::string(raw) + "' is out of range; " + accepted);
  return tokens;
}

uint64_t parse_bytes(std::string_view raw, const std::string& subject) {
  const std::string accepted = "accepted: a size such as 80GB, 24GiB, 1.5TB, 512MB, or a plain byte count";
  std::string_view text = trim(raw);
  if (!text.empty() && text.front() == '-') throw InputError(subject, "'" + std::string(raw) + "' is negative; " + accepted);
  Decimal d;
  std::string_view suffix;
  if (!split_number(text, d, suffix)) throw InputError(subject, "'" + std::string(raw) + "' is not a size; " + accepted);
  std::string s = upper(suffix);
  uint64_t multiplier = 0;
  if (s.empty() || s == "B") multiplier = 1;
  else if (s == "K" || s == "KB") multiplier = 1000;
  else if (s == "M" || s == "MB") multiplier = 1000ull * 1000;
  else if (s == "G" || s == "GB") multiplier = 1000ull * 1000 * 1000;
  else if (s == "T" || s == "TB") multiplier = 1000ull * 1000 * 1000 * 1000;
  else if (s == "KIB") multiplier = 1ull << 10;
  else if (s == "MIB") multiplier = 1ull << 20;
  else if (s == "GIB") multiplier = 1ull << 30;
  else if (s == "TIB") multiplier = 1ull << 40;
  else throw InputError(subject, "unknown unit '" + std::string(suffix) + "' in '" + std::string(raw) + "'; " + accepted);
  uint64_t bytes = 0;
  // Engines print sizes such as 79.19 GiB: a fraction of a unit is rounded down to whole bytes
  // (under one byte off); a fraction of a single byte is refused.
  if (!(multiplier > 1 ? floor_scale(d, multiplier, bytes) : exact_scale(d, multiplier, bytes)))
    throw InputError(subject, "'" + std::string(raw) + "' is not a whole number of bytes; " + accepted);
  if (bytes > (uint64_t{1} << 60)) throw InputError(subject, "'" + std::string(raw) + "' is larger than 1 EiB; " + accepted);
  return bytes;
}

uint32_t parse_percent_bp(std::string_view raw, const std::string& subject) {
  const std::string accepted = "accepted: a percentage from 0% to 1000% with at most two decimals, such as 15% or 9.75";
  std::string_view text = trim(raw);
  if (!text.empty() && text.front() == '-') throw InputError(subject, "'" + std::string(raw) + "' is negative; " + accepted);
  Decimal d;
  std::string_view suffix;
  if (!split_number(text, d, suffix) || !(suffix.empty() || suffix == "%")) throw InputError(subject, "'" + std::string(raw) + "' is not a percentage; " + accepted);
  uint64_t bp = 0;
  if (!exact_scale(d, 100, bp)) throw InputError(subject, "'" + std::string(raw) + "' has more than two decimals; " + accepted);
  if (bp > 100000) throw InputError(subject, "'" + std::string(raw) + "' is out of range; " + accepted);
  return static_cast<uint32_t>(bp);
}

uint64_t parse_count(std::string_view raw, const std::string& subject, uint64_t min, uint64_t max) {
  const std::string accepted = fmt::format("accepted: a whole number from {} to {}", min, max);
  std::string_view text = trim(raw);
  if (!text.empty() && text.front() == '-') throw InputError(subject, "'" + std::string(raw) + "' is negative; " + accepted);
  Decimal d;
  std::string_view suffix;
  uint64_t n = 0;
  if (!split_number(text, d, suffix) || !suffix.empty() || !exact_scale(d, 1, n)) throw InputError(subject, "'" + std::string(raw) + "' is not a whole number; " + accepted);
  if (n < min || n > max) throw InputError(subject, "'" + std::string(raw) + "' is out of range; " + accepted);
  return n;
}

uint64_t parse_fixed(std::string_view raw, const std::string& subject, int decimals, uint64_t max_scaled, const std::string& accepted) {
  std::string_view text = trim(raw);
  Decimal d;
  std::string_view suffix;
  uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  uint64_t n = 0;
  if (text.empty() || text.front() == '-' || !split_number(text, d, suffix) || !suffix.empty() || !exact_scale(d, scale, n) || n == 0 || n > max_scaled) {
    throw InputError(subject, "'" + std::string(raw) + "' is not accepted; accepted: " + accepted);
  }
  return n;
}

ByteUnits parse_units(std::string_view text, const std::string& subject) {
  std::string s = upper(trim(text));
  if (s == "GB" || s == "DECIMAL") return ByteUnits::Decimal;
  if (s == "GIB" || s == "BINARY") return ByteUnits::Binary;
  throw InputError(subject, "'" + std::string(text) + "' is not a unit; accepted: gb (10^9 bytes, the default) or gib (2^30 bytes)");
}

double to_gb(uint64_t bytes, ByteUnits units) {
  return static_cast<double>(bytes) / (units == ByteUnits::Decimal ? 1e9 : 1073741824.0);
}

std::string format_grouped(double value, int decimals) {
  std::string s = fmt::format("{:.{}f}", value, decimals);
  size_t point = s.find('.');
  size_t int_end = point == std::string::npos ? s.size() : point;
  size_t start = (s[0] == '-') ? 1 : 0;
  std::string out = s.substr(0, start);
  for (size_t i = start; i < int_end; ++i) {
    out += s[i];
    size_t remaining = int_end - i - 1;
    if (remaining > 0 && remaining % 3 == 0) out += ',';
  }
  out += s.substr(int_end);
  return out;
}

std::string format_bytes(uint64_t bytes, ByteUnits units, int decimals) {
  // Below 10 MB a GB figure would print as 0.00: switch to MB so small models stay readable.
  const bool decimal = units == ByteUnits::Decimal;
  if (bytes > 0 && bytes < (decimal ? 10'000'000ull : 10ull << 20)) {
    return format_grouped(static_cast<double>(bytes) / (decimal ? 1e6 : 1048576.0), decimals) + (decimal ? " MB" : " MiB");
  }
  return format_grouped(to_gb(bytes, units), decimals) + (decimal ? " GB" : " GiB");
}

std::string format_count(uint64_t n) { return format_grouped(static_cast<double>(n), 0); }

std::string format_tokens(uint64_t tokens) {
  if (tokens >= (1ull << 20) && tokens % (1ull << 20) == 0) return fmt::format("{}M", tokens >> 20);
  if (tokens >= 1024 && tokens % 1024 == 0) return fmt::format("{}K", tokens >> 10);
  return fmt::format("{}", tokens);
}

std::string format_params(uint64_t params) {
  double p = static_cast<double>(params);
  // Each unit starts where the smaller one would round up to 1000 (999,885,952 is "1B", not "1e+03M").
  if (p >= 999.5e9) return fmt::format("{:.4g}T", p / 1e12);  // 1.026T: trillions need a fourth digit
  if (p >= 999.5e6) return fmt::format("{:.3g}B", p / 1e9);
  if (p >= 999.5e3) return fmt::format("{:.3g}M", p / 1e6);
  return format_count(params);
}

std::string format_percent_bp(uint32_t bp) {
  if (bp % 100 == 0) return fmt::format("{}%", bp / 100);
  if (bp % 10 == 0) return fmt::format("{}.{}%", bp / 100, (bp % 100) / 10);
  return fmt::format("{}.{:02}%", bp / 100, bp % 100);
}

}  // namespace vc
