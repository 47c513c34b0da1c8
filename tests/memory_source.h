#pragma once
// A ByteSource over bytes in memory, for feeding readers truncated or corrupted headers.
#include <cstring>
#include <string>

#include "core/error.h"
#include "sources/io/byte_source.h"

namespace vc::testing {

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string bytes, std::string label = "memory.gguf") : bytes_(std::move(bytes)), label_(std::move(label)) {}
  const std::string& label() const override { return label_; }
  uint64_t size() const override { return bytes_.size(); }
  uint64_t bytes_fetched() const override { return fetched_; }
  void read_at(uint64_t offset, char* dst, uint64_t n) override {
    if (offset > bytes_.size() || n > bytes_.size() - offset) throw InputError(label_, "read past the end");
    std::memcpy(dst, bytes_.data() + offset, n);
    fetched_ += n;
  }

 private:
  std::string bytes_;
  std::string label_;
  uint64_t fetched_ = 0;
};

}  // namespace vc::testing
