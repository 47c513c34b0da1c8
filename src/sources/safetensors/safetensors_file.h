#pragma once
// One .safetensors file's header: an 8-byte little-endian length, then a JSON object of
// name -> {dtype, shape, data_offsets} (and "__metadata__"). Only the header is read.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sources/io/byte_source.h"

namespace vc {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;  // "BF16", "F8_E4M3", "U8", ...
  std::vector<uint64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the end of the header
  uint64_t end = 0;
  uint64_t elements = 0;
  uint64_t bytes() const { return end - begin; }
};

struct SafetensorsFile {
  std::string label;
  uint64_t file_size = 0;
  uint64_t header_bytes = 0;  // the JSON length
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
};

namespace safetensors_limits {
inline constexpr uint64_t kMaxHeader = uint64_t{100} << 20;  // the format's own limit (100 MB)
inline constexpr uint64_t kMaxTensors = uint64_t{1} << 20;
inline constexpr uint64_t kMaxDims = 8;
inline constexpr unsigned kMaxDepth = 8;  // JSON nesting; real headers are 3 deep
}  // namespace safetensors_limits

// Bits per element of a safetensors dtype (F4 = 4, BF16 = 16, ...); 0 when unknown.
uint64_t safetensors_dtype_bits(const std::string& dtype);

// InputError naming the file for a bad length, bad JSON, unknown dtype, offsets past the end,
// overlapping tensors or a byte range that disagrees with dtype x shape.
SafetensorsFile read_safetensors(ByteSource& src);

// Deepest nesting of [ and { in JSON text (strings skipped); readers refuse deep documents
// before handing them to a recursive parser.
unsigned json_depth(const std::string& text);

}  // namespace vc
