#pragma once
// A GGUF file's header (v2 and v3): metadata key/values and tensor infos, read through a bounded
// reader. Nothing past the tensor infos is read: tensor data stays where it is.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sources/io/byte_source.h"

namespace vc {

enum class GgufType : uint32_t { U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7, String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12 };
const char* to_string(GgufType t);

struct GgufValue {
  GgufType type = GgufType::U8;
  uint64_t u = 0;   // unsigned types and bool
  int64_t i = 0;    // signed types
  double f = 0;     // F32, F64
  std::string s;    // String
  // Array: element type and count; items are kept only up to a budget (tokenizer vocabularies
  // run to 10^5 strings), `items.size() < count` says some were skipped.
  GgufType elem_type = GgufType::U8;
  uint64_t count = 0;
  std::vector<GgufValue> items;

  // A non-negative integer value (any integer type, or bool), else nullopt.
  std::optional<uint64_t> as_u64() const;
  bool is_array() const { return type == GgufType::Array; }
};

struct GgufTensor {
  std::string name;
  std::vector<uint64_t> ne;  // ggml order
  uint32_t type_id = 0;
  std::string type_name;
  uint64_t offset = 0;  // from the start of the data section
  uint64_t bytes = 0;
  uint64_t elements = 0;
};

struct GgufFile {
  std::string label;
  uint32_t version = 0;
  uint64_t file_size = 0;
  uint64_t alignment = 32;
  uint64_t data_offset = 0;  // where tensor data starts in the file
  std::map<std::string, GgufValue> metadata;
  std::vector<std::string> key_order;
  std::vector<GgufTensor> tensors;

  const GgufValue* find(const std::string& key) const;
  uint64_t tensor_bytes() const;  // the sum of every tensor's bytes (the weights)
  uint64_t data_span() const;     // from data start to the end of the last tensor (with padding)
};

namespace gguf_limits {
inline constexpr uint64_t kMaxTensors = uint64_t{1} << 20;
inline constexpr uint64_t kMaxKeys = uint64_t{1} << 20;
inline constexpr uint64_t kMaxString = uint64_t{1} << 24;  // 16 MiB (chat templates are KBs)
inline constexpr uint64_t kMaxKeyLen = 65535;
inline constexpr unsigned kMaxDims = 4;                    // GGML_MAX_DIMS
inline constexpr unsigned kMaxArrayDepth = 8;
inline constexpr uint64_t kMaxKeptItems = uint64_t{1} << 18;  // array items kept across the file (the rest only counted)
inline constexpr uint64_t kMaxHeaderBytes = uint64_t{256} << 20;  // real headers: < 20 MB with the tokenizer
}  // namespace gguf_limits

// Reads the header; InputError naming the file for any bad magic, version, type, size or offset.
GgufFile read_gguf(ByteSource& src);

}  // namespace vc
