#pragma once
// Parsing of user quantities (tokens, bytes, percentages) and display of byte counts.
// Tokens use binary suffixes (32K = 32,768; 1M = 1,048,576); bytes use decimal GB by default.
#include <cstdint>
#include <string>
#include <string_view>

namespace vc {

// Upper bounds on what a user may ask for: large enough for any real model, small enough that
// products of them cannot overflow 64-bit byte counts.
inline constexpr uint64_t kMaxContextTokens = uint64_t{1} << 34;  // 16G tokens
inline constexpr uint64_t kMaxSequences = uint64_t{1} << 20;

// "8192", "32K", "1M", "1.5M" (binary suffixes; must come out as a whole number of tokens).
// Throws InputError(subject, ...) naming the accepted forms.
uint64_t parse_tokens(std::string_view text, const std::string& subject);

// "80GB", "141 GB", "24GiB", "1.5TB", "512" (bytes), "64G" (decimal GB). Throws InputError.
uint64_t parse_bytes(std::string_view text, const std::string& subject);

// A percentage in basis points (1/100 of a percent): "15%", "15", "9.75%" -> 1500, 1500, 975.
uint32_t parse_percent_bp(std::string_view text, const std::string& subject);

// A positive integer within [min, max].
uint64_t parse_count(std::string_view text, const std::string& subject, uint64_t min, uint64_t max);

// A decimal number scaled by 10^decimals, exactly: ("1.7", 3) -> 1700. Must be in (0, max_scaled].
uint64_t parse_fixed(std::string_view text, const std::string& subject, int decimals, uint64_t max_scaled, const std::string& accepted);

enum class ByteUnits { Decimal, Binary };
ByteUnits parse_units(std::string_view text, const std::string& subject);

// "1,561.00 GB" (decimal) or "1,453.74 GiB" (binary); `decimals` digits after the point.
// Figures under 10 MB print in MB (MiB) instead, so they never show as 0.00 GB.
std::string format_bytes(uint64_t bytes, ByteUnits units = ByteUnits::Decimal, int decimals = 2);
// The number alone in GB or GiB (for tables and verdicts).
double to_gb(uint64_t bytes, ByteUnits units = ByteUnits::Decimal);
// "1,048,576"
std::string format_count(uint64_t n);
// "1M", "32K", "8192" -> the shortest exact binary-suffixed form.
std::string format_tokens(uint64_t tokens);
// "2.8T", "104B", "8.03B" params.
std::string format_params(uint64_t params);
// 1500 bp -> "15%", 975 -> "9.75%".
std::string format_percent_bp(uint32_t bp);
// A number with thousands separators and `decimals` digits: 1561.0 -> "1,561.00".
std::string format_grouped(double value, int decimals);

}  // namespace vc
