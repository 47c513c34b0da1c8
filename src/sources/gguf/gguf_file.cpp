#include "sources/gguf/gguf_file.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/checked.h"
#include "core/error.h"
#include "sources/gguf/ggml_types.h"
#include "sources/gguf/gguf_header_outlook.h"
#include "sources/io/bounded_reader.h"

namespace vc {

const char* to_string(GgufType t) {
  switch (t) {
    case GgufType::U8: return "u8";
    case GgufType::I8: return "i8";
    case GgufType::U16: return "u16";
    case GgufType::I16: return "i16";
    case GgufType::U32: return "u32";
    case GgufType::I32: return "i32";
    case GgufType::F32: return "f32";
    case GgufType::Bool: return "bool";
    case GgufType::String: return "string";
    case GgufType::Array: return "array";
    case GgufType::U64: return "u64";
    case GgufType::I64: return "i64";
    case GgufType::F64: return "f64";
  }
  return "?";
}

std::optional<uint64_t> GgufValue::as_u64() const {
  switch (type) {
    case GgufType::U8: case GgufType::U16: case GgufType::U32: case GgufType::U64: case GgufType::Bool: return u;
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64:
      if (i < 0) return std::nullopt;
      return static_cast<uint64_t>(i);
    default: return std::nullopt;
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

uint64_t GgufFile::tensor_bytes() const {
  uint64_t n = 0;
  for (const auto& t : tensors) n = checked_add(n, t.bytes);
  return n;
}

uint64_t GgufFile::data_span() const {
  uint64_t end = 0;
  for (const auto& t : tensors) end = std::max(end, checked_add(t.offset, t.bytes));
  return end;
}

namespace {

// Fixed width of a scalar type; 0 for string and array.
uint64_t scalar_width(GgufType t) {
  switch (t) {
    case GgufType::U8: case GgufType::I8: case GgufType::Bool: return 1;
    case GgufType::U16: case GgufType::I16: return 2;
    case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
    case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
    default: return 0;
  }
}

class Parser {
 public:
  Parser(BoundedReader& r, const GgufHeaderOutlook& outlook) : r_(r), outlook_(outlook) {}

  // The value being read is tokenizer.ggml.tokens (what follows it is projected from its count).
  void reading_tokens(bool on) { tokens_ = on; }

  GgufType type(const std::string& field) {
    uint32_t t = r_.u32(field);
    if (t > static_cast<uint32_t>(GgufType::F64)) r_.fail(field + " is value type " + std::to_string(t) + "; GGUF defines types 0 to 12");
    return static_cast<GgufType>(t);
  }

  GgufValue value(GgufType t, const std::string& key, unsigned depth) {
    GgufValue v;
    v.type = t;
    switch (t) {
      case GgufType::U8: v.u = r_.u8(key); break;
      case GgufType::U16: v.u = r_.u16(key); break;
      case GgufType::U32: v.u = r_.u32(key); break;
      case GgufType::U64: v.u = r_.u64(key); break;
      case GgufType::I8: v.i = static_cast<int8_t>(r_.u8(key)); break;
      case GgufType::I16: v.i = static_cast<int16_t>(r_.u16(key)); break;
      case GgufType::I32: v.i = static_cast<int32_t>(r_.u32(key)); break;
      case GgufType::I64: v.i = static_cast<int64_t>(r_.u64(key)); break;
      case GgufType::F32: {
        uint32_t bits = r_.u32(key);
        float f = 0;
        std::memcpy(&f, &bits, sizeof f);
        v.f = f;
        break;
      }
      case GgufType::F64: {
        uint64_t bits = r_.u64(key);
        std::memcpy(&v.f, &bits, sizeof v.f);
        break;
      }
      case GgufType::Bool: {
        uint8_t b = r_.u8(key);
        if (b > 1) r_.fail(key + " is a bool stored as " + std::to_string(b) + "; only 0 and 1 are valid");
        v.u = b;
        break;
      }
      case GgufType::String: v.s = r_.string(gguf_limits::kMaxString, key); break;
      case GgufType::Array: array(v, key, depth); break;
    }
    return v;
  }

 private:
  void array(GgufValue& v, const std::string& key, unsigned depth) {
    if (depth >= gguf_limits::kMaxArrayDepth) r_.fail(key + " nests arrays more than " + std::to_string(gguf_limits::kMaxArrayDepth) + " deep");
    v.elem_type = type(key + " element type");
    v.count = r_.u64(key + " array length");
    // Every element takes at least one byte (strings take 8): a count beyond the bytes left is a lie.
    const uint64_t min_width = v.elem_type == GgufType::String || v.elem_type == GgufType::Array ? 8 : scalar_width(v.elem_type);
    if (v.count > r_.remaining() / min_width) {
      r_.fail(key + " claims " + std::to_string(v.count) + " elements of " + to_string(v.elem_type) + " but only " +
              std::to_string(r_.remaining()) + " bytes remain");
    }
    const uint64_t width = scalar_width(v.elem_type);
    const uint64_t start = r_.position();
    for (uint64_t k = 0; k < v.count; ++k) {
      // Every 4,096 strings, tell the reader where the header now looks to end (one remote range
      // for the rest instead of doubling reads).
      if (v.elem_type == GgufType::String && k % 4096 == 0) {
        r_.expect_end(projected_header_end(r_.position(), start, k, v.count, tokens_ && depth == 0, outlook_));
      }
      if (kept_ >= gguf_limits::kMaxKeptItems && width) {  // skip the rest of a long numeric array
        r_.skip(checked_mul(v.count - k, width), key);
        break;
      }
      GgufValue item = value(v.elem_type, key, depth + 1);
      if (kept_ < gguf_limits::kMaxKeptItems) {
        v.items.push_back(std::move(item));
        ++kept_;
      }
    }
  }

  BoundedReader& r_;
  const GgufHeaderOutlook& outlook_;
  bool tokens_ = false;
  uint64_t kept_ = 0;
};

}  // namespace

GgufFile read_gguf(ByteSource& src) {
  GgufFile f;
  f.label = src.label();
  f.file_size = src.size();
  BoundedReader r(src, 0, std::min(src.size(), gguf_limits::kMaxHeaderBytes));
  char magic[4];
  r.bytes(magic, 4, "magic");
  if (std::memcmp(magic, "GGUF", 4) != 0) r.fail("is not a GGUF file (the first 4 bytes are not 'GGUF')");
  f.version = r.u32("version");
  if (f.version != 2 && f.version != 3) {
    r.fail("is GGUF version " + std::to_string(f.version) + "; versions 2 and 3 are read (big-endian files show a byte-swapped version)");
  }
  const uint64_t n_tensors = r.u64("tensor count");
  const uint64_t n_kv = r.u64("metadata key count");
  if (n_tensors > gguf_limits::kMaxTensors) r.fail("claims " + std::to_string(n_tensors) + " tensors; at most " + std::to_string(gguf_limits::kMaxTensors) + " are accepted");
  if (n_kv > gguf_limits::kMaxKeys) r.fail("claims " + std::to_string(n_kv) + " metadata keys; at most " + std::to_string(gguf_limits::kMaxKeys) + " are accepted");

  GgufHeaderOutlook outlook;
  outlook.tensor_infos = n_tensors;
  Parser p(r, outlook);
  for (uint64_t k = 0; k < n_kv; ++k) {
    std::string key = r.string(gguf_limits::kMaxKeyLen, "metadata key " + std::to_string(k));
    GgufType t = p.type("metadata '" + key + "' type");
    p.reading_tokens(key == "tokenizer.ggml.tokens");
    GgufValue v = p.value(t, "metadata '" + key + "'", 0);
    if (key == "tokenizer.ggml.model" && v.type == GgufType::String) outlook.bpe_tokenizer = v.s == "gpt2";
    if (f.metadata.count(key)) r.fail("has metadata key '" + key + "' twice");
    f.key_order.push_back(key);
    f.metadata.emplace(std::move(key), std::move(v));
  }
  if (const GgufValue* a = f.find("general.alignment")) {
    auto al = a->as_u64();
    if (!al || *al == 0 || (*al & (*al - 1)) != 0 || *al > (1u << 20)) r.fail("general.alignment must be a power of two up to 1 MiB");
    f.alignment = *al;
  }

  f.tensors.reserve(std::min<uint64_t>(n_tensors, r.remaining() / 24));  // each info takes >= 24 bytes
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensor t;
    t.name = r.string(gguf_limits::kMaxKeyLen, "tensor " + std::to_string(k) + " name");
    const std::string what = "tensor '" + t.name + "'";
    const uint32_t n_dims = r.u32(what, " dimension count");
    if (n_dims > gguf_limits::kMaxDims) r.fail(what + " has " + std::to_string(n_dims) + " dimensions; ggml allows at most 4");
    uint64_t ne[gguf_limits::kMaxDims] = {1, 1, 1, 1};
    t.elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      ne[d] = r.u64(what, " dimension");
      t.ne.push_back(ne[d]);
      try {
        t.elements = checked_mul(t.elements, ne[d]);
      } catch (const OverflowError&) {
        r.fail(what + " has dimensions whose product overflows 64 bits");
      }
    }
    t.type_id = r.u32(what, " type");
    const GgmlType* gt = find_ggml_type(t.type_id);
    if (!gt) r.fail(what + " has ggml type " + std::to_string(t.type_id) + ", which this build does not know (see data/ggml_types.json)");
    t.type_name = gt->name;
    t.offset = r.u64(what, " offset");
    try {
      t.bytes = ggml_tensor_bytes(*gt, ne, n_dims, f.label + ": " + what);
    } catch (const OverflowError&) {
      r.fail(what + " has a byte size that overflows 64 bits");
    }
    if (t.offset % f.alignment != 0) r.fail(what + " offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(f.alignment));
    f.tensors.push_back(std::move(t));
  }
  // Duplicate names, by sorting views of them once all are read: a tree of 10^5 copied names was
  // a fifth of the read (callgrind, docs/performance.md).
  std::vector<std::string_view> names;
  names.reserve(f.tensors.size());
  for (const auto& t : f.tensors) names.push_back(t.name);
  std::sort(names.begin(), names.end());
  if (auto dup = std::adjacent_find(names.begin(), names.end()); dup != names.end()) r.fail("has tensor '" + std::string(*dup) + "' twice");
  f.data_offset = checked_add(r.position(), (f.alignment - r.position() % f.alignment) % f.alignment);
  if (!f.tensors.empty()) {
    const uint64_t room = f.data_offset <= f.file_size ? f.file_size - f.data_offset : 0;
    for (const auto& t : f.tensors) {
      if (t.offset > room || t.bytes > room - t.offset) {
        r.fail("tensor '" + t.name + "' lies past the end of the file (data at " + std::to_string(f.data_offset) + " + offset " +
               std::to_string(t.offset) + " + " + std::to_string(t.bytes) + " bytes; the file has " + std::to_string(f.file_size) + ")");
      }
    }
  }
  return f;
}

}  // namespace vc
