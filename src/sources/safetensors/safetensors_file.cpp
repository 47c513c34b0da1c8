#include "sources/safetensors/safetensors_file.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/checked.h"
#include "core/error.h"
#include "core/strict_json.h"
#include "sources/io/bounded_reader.h"

namespace vc {

uint64_t safetensors_dtype_bits(const std::string& d) {
  // The dtypes of the safetensors format (safetensors/src/tensor.rs Dtype).
  static const std::map<std::string, uint64_t> bits = {
      {"BOOL", 8}, {"U8", 8}, {"I8", 8}, {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F8_E8M0", 8}, {"I16", 16}, {"U16", 16},
      {"F16", 16}, {"BF16", 16}, {"I32", 32}, {"U32", 32}, {"F32", 32}, {"F64", 64}, {"I64", 64}, {"U64", 64},
      {"F4", 4}, {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"C64", 64}};
  auto it = bits.find(d);
  return it == bits.end() ? 0 : it->second;
}

unsigned json_depth(const std::string& text) {
  unsigned depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    else if ((c == '}' || c == ']') && depth > 0) --depth;
  }
  return deepest;
}

SafetensorsFile read_safetensors(ByteSource& src) {
  SafetensorsFile f;
  f.label = src.label();
  f.file_size = src.size();
  BoundedReader len(src, 0, 8);
  const uint64_t n = len.u64("header length");
  // Exactly the header, never the data, in one read: the length it declares is what is fetched.
  BoundedReader r(src, 8, n <= src.size() - 8 ? 8 + n : src.size(), std::max<uint64_t>(n, 1));
  if (n > safetensors_limits::kMaxHeader) {
    r.fail("header length is " + std::to_string(n) + " bytes; safetensors allows at most 100 MB (is this a safetensors file?)");
  }
  if (n > src.size() - 8) r.fail("is truncated: the header claims " + std::to_string(n) + " bytes but the file has " + std::to_string(src.size() - 8) + " after the length");
  f.header_bytes = n;
  std::string text(n, '\0');
  r.bytes(text.data(), n, "header");
  if (text.empty() || text.front() != '{') r.fail("header does not start with '{'; not a safetensors file");
  if (json_depth(text) > safetensors_limits::kMaxDepth) r.fail("header nests JSON deeper than 8 levels; real headers are 3 deep");
  StrictJson parsed = parse_strict_json(text);
  text = std::string();  // the DOM below is what is held from here on
  if (!parsed.duplicate_key.empty()) r.fail("header names '" + parsed.duplicate_key + "' twice; each tensor name must be unique");
  const nlohmann::json& doc = parsed.doc;
  if (doc.is_discarded() || !doc.is_object()) r.fail("header is not a valid JSON object");
  if (doc.size() > safetensors_limits::kMaxTensors) r.fail("header lists more than 2^20 tensors");

  const uint64_t data_size = f.file_size - 8 - n;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& name = it.key();
    const nlohmann::json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) r.fail("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (m.value().is_string()) f.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + name + "'";
    if (!v.is_object()) r.fail(what + " is not an object with dtype, shape and data_offsets");
    auto dt = v.find("dtype");
    auto sh = v.find("shape");
    auto off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) r.fail(what + " has no dtype string");
    if (sh == v.end() || !sh->is_array() || sh->size() > safetensors_limits::kMaxDims) r.fail(what + " needs a shape array of at most 8 dimensions");
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned()) {
      r.fail(what + " needs data_offsets [begin, end] of unsigned integers");
    }
    SafetensorsTensor t;
    t.name = name;
    t.dtype = dt->get<std::string>();
    const uint64_t bits = safetensors_dtype_bits(t.dtype);
    if (bits == 0) r.fail(what + " has dtype '" + t.dtype + "'; known: BOOL, U8, I8, F8_E4M3, F8_E5M2, F8_E8M0, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, F4, F6_E2M3, F6_E3M2");
    t.elements = 1;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) r.fail(what + " has a shape entry that is not an unsigned integer");
      t.shape.push_back(d.get<uint64_t>());
      try {
        t.elements = checked_mul(t.elements, t.shape.back());
      } catch (const OverflowError&) {
        r.fail(what + " has a shape whose product overflows 64 bits");
      }
    }
    t.begin = (*off)[0].get<uint64_t>();
    t.end = (*off)[1].get<uint64_t>();
    if (t.begin > t.end || t.end > data_size) {
      r.fail(what + " data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] lie outside the " + std::to_string(data_size) + " data bytes");
    }
    const u128 want_bits = static_cast<u128>(t.elements) * bits;
    if (want_bits % 8 != 0 || want_bits / 8 != t.bytes()) {
      r.fail(what + " holds " + std::to_string(t.bytes()) + " bytes but " + t.dtype + " x shape needs " +
             std::to_string(static_cast<uint64_t>(std::min<u128>(want_bits / 8, UINT64_MAX))));
    }
    f.tensors.push_back(std::move(t));
  }
  // Tensors may not overlap (the format requires a dense, ordered layout).
  std::vector<const SafetensorsTensor*> order;
  for (const auto& t : f.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i]->begin < order[i - 1]->end) r.fail("tensors '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap");
  }
  return f;
}

}  // namespace vc
