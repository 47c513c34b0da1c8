#include "model/quant.h"

#include <fmt/format.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "catalogue/embedded_data.h"
#include "core/checked.h"
#include "core/error.h"

namespace vc {
namespace {

std::string normalize(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '-' || c == ' ') c = '_';
    r += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return r;
}

// "4.85" -> 485/100, exactly.
BitsPerWeight parse_bits(const std::string& text) {
  uint64_t num = 0;
  uint64_t den = 1;
  bool point = false;
  for (char c : text) {
    if (c == '.') { point = true; continue; }
    if (!std::isdigit(static_cast<unsigned char>(c))) throw InputError("quant_formats.json", "bad bits_per_weight '" + text + "'");
    num = num * 10 + static_cast<uint64_t>(c - '0');
    if (point) den *= 10;
  }
  return {num, den};
}

}  // namespace

uint64_t BitsPerWeight::bytes_for(uint64_t elements) const {
  return mul_div_round(elements, numerator, checked_mul(denominator, 8));
}

std::string QuantFormat::bits_text() const {
  std::string s = fmt::format("{:.4f}", bits.value());
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

uint64_t QuantFormat::row_bytes(uint64_t elements) const {
  if (is_mix) return bits.bytes_for(elements);
  return checked_mul(ceil_div(elements, block_elems), block_bytes);
}

QuantTable::QuantTable(std::string_view json_text) {
  auto doc = nlohmann::json::parse(json_text);
  for (const auto& t : doc.at("types")) {
    QuantFormat f;
    f.name = t.at("name").get<std::string>();
    f.aliases = t.value("aliases", std::vector<std::string>{});
    f.block_elems = t.at("block_elems").get<uint64_t>();
    f.block_bytes = t.at("block_bytes").get<uint64_t>();
    f.bits = {f.block_bytes * 8, f.block_elems};
    f.kind = t.at("kind").get<std::string>();
    f.source = t.at("source").get<std::string>();
    f.row_fallback = t.value("row_fallback", std::string{});
    if (!f.row_fallback.empty()) f.row_block = f.block_elems;
    formats_.push_back(std::move(f));
  }
  for (const auto& m : doc.at("mixes")) {
    QuantFormat f;
    f.name = m.at("name").get<std::string>();
    f.aliases = m.value("aliases", std::vector<std::string>{});
    f.is_mix = true;
    f.block_elems = 0;
    f.block_bytes = 0;
    f.bits = parse_bits(m.at("bits_per_weight").get<std::string>());
    f.kind = "mix";
    f.source = m.at("source").get<std::string>();
    f.row_fallback = m.value("row_fallback", std::string{});
    f.row_block = m.value("row_block", uint64_t{0});
    formats_.push_back(std::move(f));
  }
  for (const auto& f : formats_) {  // a fallback names a block type of this table, over a real block
    if (f.row_fallback.empty()) continue;
    if (!find_type(f.row_fallback) || f.row_block < 2) throw InputError("quant_formats.json", f.name + ": bad row_fallback '" + f.row_fallback + "'");
  }
}

const QuantTable& QuantTable::builtin() {
  static const QuantTable table(embedded::file_text("quant_formats.json"));
  return table;
}

const QuantFormat* QuantTable::find_tier(std::string_view name) const {
  const std::string key = normalize(name);
  for (bool mixes : {true, false}) {
    for (const auto& f : formats_) {
      if (f.is_mix != mixes) continue;
      if (normalize(f.name) == key) return &f;
      for (const auto& a : f.aliases) if (normalize(a) == key) return &f;
    }
  }
  return nullptr;
}

const QuantFormat* QuantTable::find_type(std::string_view name) const {
  const std::string key = normalize(name);
  for (const auto& f : formats_) {
    if (f.is_mix) continue;
    if (normalize(f.name) == key) return &f;
    for (const auto& a : f.aliases) if (normalize(a) == key) return &f;
  }
  return nullptr;
}

std::string QuantTable::names(bool include_mixes) const {
  std::string out;
  for (const auto& f : formats_) {
    if (f.is_mix && !include_mixes) continue;
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

}  // namespace vc
