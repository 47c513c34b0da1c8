#include <filesystem>
#include <fstream>

#include "core/checked.h"
#include "core/error.h"
#include "sources/io/byte_source.h"

namespace vc {
namespace {

class FileSource final : public ByteSource {
 public:
  explicit FileSource(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec)) throw InputError(path_, "is not a readable file");
    size_ = std::filesystem::file_size(path_, ec);
    if (ec) throw InputError(path_, "cannot read its size: " + ec.message());
    in_.open(path_, std::ios::binary);
    if (!in_) throw InputError(path_, "cannot open for reading");
  }
  const std::string& label() const override { return path_; }
  uint64_t size() const override { return size_; }
  uint64_t bytes_fetched() const override { return fetched_; }
  void read_at(uint64_t offset, char* dst, uint64_t n) override {
    if (offset > size_ || n > size_ - offset) {
      throw InputError(path_, "is truncated: needs bytes up to offset " + std::to_string(checked_add(offset, n)) + " but the file has " +
                                  std::to_string(size_));
    }
    in_.clear();
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(dst, static_cast<std::streamsize>(n));
    if (static_cast<uint64_t>(in_.gcount()) != n) throw InputError(path_, "read failed at offset " + std::to_string(offset));
    fetched_ += n;
  }

 private:
  std::string path_;
  uint64_t size_ = 0;
  uint64_t fetched_ = 0;
  std::ifstream in_;
};

}  // namespace

std::unique_ptr<ByteSource> open_file_source(const std::string& path) { return std::make_unique<FileSource>(path); }

}  // namespace vc
