#include "sources/config/config_view.h"

#include <fmt/format.h>

#include "core/error.h"

namespace vc {
namespace {

constexpr size_t kMaxConfigBytes = 16 * 1024 * 1024;
constexpr int kMaxJsonDepth = 64;

const nlohmann::json& pick_text(const nlohmann::json& root) {
  for (const char* k : {"text_config", "language_config", "llm_config"}) {
    auto it = root.find(k);
    if (it != root.end() && it->is_object()) return *it;
  }
  return root;
}

// Replaces bare Infinity / -Infinity / NaN outside strings with null, so strict parsers accept it.
std::string sanitize_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') { in_string = true; out += c; continue; }
    if (text.compare(i, 9, "-Infinity") == 0) { out += "null"; i += 8; continue; }
    if (text.compare(i, 8, "Infinity") == 0) { out += "null"; i += 7; continue; }
    if (text.compare(i, 3, "NaN") == 0) { out += "null"; i += 2; continue; }
    out += c;
  }
  return out;
}

}  // namespace

nlohmann::json parse_config_text(const std::string& text, const std::string& label) {
  if (text.size() > kMaxConfigBytes) throw InputError(label, fmt::format("config is {} bytes; at most {} accepted", text.size(), kMaxConfigBytes));
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {  // bound nesting before recursive parsing
    char c = text[i];
    if (in_string) { if (c == '\\') ++i; else if (c == '"') in_string = false; continue; }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') max_depth = std::max(max_depth, ++depth);
    else if (c == '}' || c == ']') --depth;
  }
  if (max_depth > kMaxJsonDepth) throw InputError(label, fmt::format("JSON nests {} levels deep; at most {} accepted", max_depth, kMaxJsonDepth));
  // The last key seen names the field when a value cannot be read (a number beyond the double
  // range, 1e505, is nlohmann's out_of_range 406, not a parse_error).
  std::string last_key;
  const auto track_key = [&last_key](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && parsed.is_string()) last_key = parsed.get<std::string>().substr(0, 64);
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(sanitize_non_finite(text), track_key);
  } catch (const nlohmann::json::out_of_range&) {
    throw InputError(last_key.empty() ? label : label + ": " + last_key, "holds a number beyond the range of a 64-bit float; accepted: numbers up to about 1.8e308");
  } catch (const nlohmann::json::exception& e) {
    throw InputError(label, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) throw InputError(label, "config.json must be a JSON object");
  return doc;
}

ConfigView::ConfigView(const nlohmann::json& root, std::string label, Model& model, StoredTensors stored)
    : root_(root), text_(pick_text(root)), label_(std::move(label)), model_(model), stored_(std::move(stored)) {}

const nlohmann::json* ConfigView::find(const std::string& key, std::string& where) const {
  if (&text_ != &root_) {
    auto it = text_.find(key);
    if (it != text_.end() && !it->is_null()) { where = "text_config." + key; return &*it; }
  }
  auto it = root_.find(key);
  if (it != root_.end() && !it->is_null()) { where = key; return &*it; }
  return nullptr;
}

bool ConfigView::has(const std::string& key) const {
  std::string where;
  return find(key, where) != nullptr;
}

void ConfigView::fail(const std::string& key, const std::string& message) const {
  throw InputError(label_ + ": " + key, message);
}

void ConfigView::warn(const std::string& message) { model_.warnings.push_back(message); }

void ConfigView::note_source(const std::string& key, const std::string& where) {
  model_.provenance[key] = label_ + " " + where;
}

uint64_t ConfigView::as_u64(const nlohmann::json& v, const std::string& where, uint64_t max, bool allow_zero) const {
  uint64_t n = 0;
  if (v.is_number_unsigned()) n = v.get<uint64_t>();
  else if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) fail(where, fmt::format("is negative ({}); accepted: 0 to {}", v.dump(), max));
    n = static_cast<uint64_t>(v.get<int64_t>());
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    // 2^64 and above (or not a number) would make the cast below undefined: refused first.
    if (!(d >= 0) || !(d < 18446744073709551616.0)) fail(where, fmt::format("is {}; accepted: 0 to {}", v.dump(), max));
    if (d != static_cast<double>(static_cast<uint64_t>(d))) fail(where, fmt::format("is {}; a whole number is expected", v.dump()));
    n = static_cast<uint64_t>(d);
  } else {
    fail(where, fmt::format("is {}; a whole number is expected", v.dump()));
  }
  if (n > max) fail(where, fmt::format("is {}; at most {} accepted", n, max));
  if (n == 0 && !allow_zero) fail(where, "is 0; a positive number is expected");
  return n;
}

uint64_t ConfigView::u64(const std::string& key, uint64_t max, bool allow_zero) {
  std::string where;
  const auto* v = find(key, where);
  if (!v) fail(key, "missing; this architecture needs it");
  note_source(key, where);
  return as_u64(*v, where, max, allow_zero);
}

std::optional<uint64_t> ConfigView::opt_u64(const std::string& key, uint64_t max) {
  std::string where;
  const auto* v = find(key, where);
  if (!v) return std::nullopt;
  note_source(key, where);
  return as_u64(*v, where, max, true);
}

uint64_t ConfigView::u64_or(const std::string& key, uint64_t fallback, uint64_t max, const std::string& why) {
  if (auto v = opt_u64(key, max)) return *v;
  model_.provenance[key] = fmt::format("default {} ({})", fallback, why);
  return fallback;
}

bool ConfigView::flag(const std::string& key, bool fallback) {
  std::string where;
  const auto* v = find(key, where);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(where, fmt::format("is {}; true or false expected", v->dump()));
  return v->get<bool>();
}

std::string ConfigView::str(const std::string& key, const std::string& fallback) {
  std::string where;
  const auto* v = find(key, where);
  if (!v) return fallback;
  if (!v->is_string()) fail(where, fmt::format("is {}; a string is expected", v->dump()));
  auto s = v->get<std::string>();
  if (s.size() > 256) fail(where, "is longer than 256 characters");
  return s;
}

const nlohmann::json* ConfigView::raw(const std::string& key) {
  std::string where;
  const auto* v = find(key, where);
  if (v) note_source(key, where);
  return v;
}

const nlohmann::json* ConfigView::object(const std::string& key) const {
  std::string where;
  const auto* v = find(key, where);
  return (v && v->is_object()) ? v : nullptr;
}

std::vector<uint64_t> ConfigView::u64_list(const nlohmann::json& array, const std::string& key, uint64_t max_len, uint64_t max_value) {
  if (!array.is_array()) fail(key, "must be a list of whole numbers");
  if (array.size() > max_len) fail(key, fmt::format("has {} entries; at most {} accepted", array.size(), max_len));
  std::vector<uint64_t> out;
  out.reserve(array.size());
  for (const auto& v : array) out.push_back(as_u64(v, key, max_value, true));
  return out;
}

std::vector<std::string> ConfigView::str_list(const std::string& key, uint64_t max_len) {
  std::string where;
  const auto* v = find(key, where);
  if (!v) return {};
  if (!v->is_array()) fail(where, "must be a list of strings");
  if (v->size() > max_len) fail(where, fmt::format("has {} entries; at most {} accepted", v->size(), max_len));
  std::vector<std::string> out;
  for (const auto& e : *v) {
    if (!e.is_string()) fail(where, "must hold only strings");
    out.push_back(e.get<std::string>());
  }
  note_source(key, where);
  return out;
}

uint64_t ConfigView::u64_in(const nlohmann::json& obj, const std::string& path, const std::string& key, uint64_t max) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) fail(path + "." + key, "missing; this architecture needs it");
  note_source(key, path + "." + key);
  return as_u64(*it, path + "." + key, max, false);
}

uint64_t ConfigView::u64_in_or(const nlohmann::json& obj, const std::string& path, const std::string& key, uint64_t fallback, uint64_t max, const std::string& why) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    model_.provenance[key] = fmt::format("default {} ({})", fallback, why);
    return fallback;
  }
  note_source(key, path + "." + key);
  return as_u64(*it, path + "." + key, max, true);
}

}  // namespace vc
