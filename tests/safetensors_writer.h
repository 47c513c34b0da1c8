#pragma once
// Writes small .safetensors files for the tests (format: 8-byte little-endian header length,
// JSON header of name -> {dtype, shape, data_offsets}, then the data). Data is zeros, written
// as a hole so big files cost no disk.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace vc::testing {

class SafetensorsWriter {
 public:
  // `bytes` as the caller worked it out (elements x dtype width).
  void tensor(const std::string& name, const std::string& dtype, const std::vector<uint64_t>& shape, uint64_t bytes) {
    header_[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {offset_, offset_ + bytes}}};
    offset_ += bytes;
  }
  void metadata(const std::string& key, const std::string& value) { header_["__metadata__"][key] = value; }

  std::string header_bytes() const {
    std::string json = header_.dump();
    std::string out;
    for (int i = 0; i < 8; ++i) out += static_cast<char>((json.size() >> (8 * i)) & 0xff);
    return out + json;
  }
  std::string whole() const {
    std::string h = header_bytes();
    h.resize(h.size() + offset_, '\0');
    return h;
  }
  void write(const std::filesystem::path& path) const {
    std::string h = header_bytes();
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(h.data(), static_cast<std::streamsize>(h.size()));
    }
    std::filesystem::resize_file(path, h.size() + offset_);
  }
  uint64_t data_bytes() const { return offset_; }

 private:
  nlohmann::json header_ = nlohmann::json::object();
  uint64_t offset_ = 0;
};

}  // namespace vc::testing
