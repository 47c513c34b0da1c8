#pragma once
// Writes small GGUF files for the tests, following the GGUF v3 layout (ggml docs/gguf.md):
// magic, version, tensor count, key count, key/values, tensor infos, padding, data.
// Tensor data is zeros; a file can be made sparse (header written, size set by truncation).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace vc::testing {

class GgufWriter {
 public:
  // ggml type ids used by the tests, with bytes per block / values per block.
  static constexpr uint32_t F32 = 0, F16 = 1, Q4_0 = 2, Q8_0 = 8, Q4_K = 12, Q6_K = 14, BF16 = 30, MXFP4 = 39;

  void u32(const std::string& key, uint32_t v) { kv_head(key, 4); put(v, 4); ++n_kv_; }
  void u64(const std::string& key, uint64_t v) { kv_head(key, 10); put(v, 8); ++n_kv_; }
  void i32(const std::string& key, int32_t v) { kv_head(key, 5); put(static_cast<uint32_t>(v), 4); ++n_kv_; }
  void f32(const std::string& key, float v) { kv_head(key, 6); put(f32_bits(v), 4); ++n_kv_; }
  void boolean(const std::string& key, bool v) { kv_head(key, 7); put(v ? 1 : 0, 1); ++n_kv_; }
  void str(const std::string& key, const std::string& v) { kv_head(key, 8); put_str(v); ++n_kv_; }
  void u32_array(const std::string& key, const std::vector<uint32_t>& v) {
    kv_head(key, 9);
    put(4, 4);
    put(v.size(), 8);
    for (uint32_t x : v) put(x, 4);
    ++n_kv_;
  }
  void i32_array(const std::string& key, const std::vector<int32_t>& v) {
    kv_head(key, 9);
    put(5, 4);
    put(v.size(), 8);
    for (int32_t x : v) put(static_cast<uint32_t>(x), 4);
    ++n_kv_;
  }
  void f32_array(const std::string& key, const std::vector<float>& v) {
    kv_head(key, 9);
    put(6, 4);
    put(v.size(), 8);
    for (float x : v) put(f32_bits(x), 4);
    ++n_kv_;
  }
  void str_array(const std::string& key, const std::vector<std::string>& v) {
    kv_head(key, 9);
    put(8, 4);
    put(v.size(), 8);
    for (const auto& s : v) put_str(s);
    ++n_kv_;
  }
  // An array of arrays of u8 (nested arrays are legal GGUF).
  void nested_array(const std::string& key, const std::vector<std::vector<uint8_t>>& v) {
    kv_head(key, 9);
    put(9, 4);
    put(v.size(), 8);
    for (const auto& inner : v) {
      put(0, 4);
      put(inner.size(), 8);
      for (uint8_t x : inner) put(x, 1);
    }
    ++n_kv_;
  }
  // `bytes` is worked out by the caller (the test states how).
  void tensor(const std::string& name, const std::vector<uint64_t>& ne, uint32_t type, uint64_t bytes) {
    infos_.push_back({name, ne, type, bytes});
  }

  // The whole file: header, then each tensor at the next multiple of `alignment`.
  std::string header(uint64_t alignment = 32, uint32_t version = 3) const {
    std::string out = "GGUF";
    auto p = [&out](uint64_t v, int n) { for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff); };
    p(version, 4);
    p(infos_.size(), 8);
    p(n_kv_, 8);
    out += kv_;
    uint64_t offset = 0;
    for (const auto& t : infos_) {
      p(t.name.size(), 8);
      out += t.name;
      p(t.ne.size(), 4);
      for (uint64_t d : t.ne) p(d, 8);
      p(t.type, 4);
      p(offset, 8);
      offset = pad(offset + t.bytes, alignment);
    }
    out.resize(pad(out.size(), alignment), '\0');
    return out;
  }
  uint64_t data_bytes(uint64_t alignment = 32) const {
    uint64_t offset = 0;
    for (size_t i = 0; i < infos_.size(); ++i) offset = i + 1 < infos_.size() ? pad(offset + infos_[i].bytes, alignment) : offset + infos_[i].bytes;
    return offset;
  }
  // Writes header + data; the data is a hole (sparse) so a 2 GB file costs no disk.
  void write(const std::filesystem::path& path, uint64_t alignment = 32) const {
    std::string h = header(alignment);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(h.data(), static_cast<std::streamsize>(h.size()));
    }
    std::filesystem::resize_file(path, h.size() + data_bytes(alignment));
  }

 private:
  struct Info {
    std::string name;
    std::vector<uint64_t> ne;
    uint32_t type;
    uint64_t bytes;
  };
  static uint64_t pad(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
  static uint32_t f32_bits(float v) {
    uint32_t bits;
    static_assert(sizeof bits == sizeof v);
    __builtin_memcpy(&bits, &v, 4);
    return bits;
  }
  void put(uint64_t v, int n) { for (int i = 0; i < n; ++i) kv_ += static_cast<char>((v >> (8 * i)) & 0xff); }
  void put_str(const std::string& s) { put(s.size(), 8); kv_ += s; }
  void kv_head(const std::string& key, uint32_t type) { put_str(key); put(type, 4); }

  std::string kv_;
  uint64_t n_kv_ = 0;
  std::vector<Info> infos_;
};

}  // namespace vc::testing
