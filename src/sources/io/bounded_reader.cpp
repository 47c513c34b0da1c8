#include "sources/io/bounded_reader.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace vc {
namespace {
constexpr uint64_t kMaxChunk = uint64_t{64} << 20;  // below the 128 MiB a remote range may ask for
}  // namespace

BoundedReader::BoundedReader(ByteSource& src, uint64_t start, uint64_t end, uint64_t chunk)
    : src_(src), pos_(start), end_(std::min(end, src.size())), chunk_(std::min(chunk ? chunk : src.preferred_chunk(), kMaxChunk)) {
  if (pos_ > end_) pos_ = end_;
}

void BoundedReader::fail(const std::string& message) const { throw InputError(src_.label(), message); }

void BoundedReader::bytes(char* dst, uint64_t n, const std::string& field) { read(dst, n, field, ""); }

void BoundedReader::read(char* dst, uint64_t n, const std::string& field, const char* suffix) {
  if (n > remaining()) {
    fail("is truncated or corrupt: " + field + suffix + " at offset " + std::to_string(pos_) + " needs " + std::to_string(n) +
         " bytes but only " + std::to_string(remaining()) + " remain");
  }
  while (n > 0) {
    const bool in_buf = pos_ >= buf_start_ && pos_ < buf_start_ + buf_.size();
    if (!in_buf) {
      const uint64_t hinted = expected_end_ > pos_ ? std::min(expected_end_ - pos_, kMaxChunk) : 0;
      const uint64_t want = std::min(std::max(chunk_, hinted), end_ - pos_);
      buf_.resize(want);
      src_.read_at(pos_, buf_.data(), want);
      buf_start_ = pos_;
      // Each refill doubles the next: a header of H bytes takes ceil(log2(H / chunk + 1)) reads
      // (round trips, remotely) instead of H / chunk, and over-reads less than H.
      chunk_ = std::min(chunk_ * 2, kMaxChunk);
    }
    const uint64_t off = pos_ - buf_start_;
    const uint64_t take = std::min<uint64_t>(n, buf_.size() - off);
    std::memcpy(dst, buf_.data() + off, take);
    dst += take;
    pos_ += take;
    n -= take;
  }
}

void BoundedReader::skip(uint64_t n, const std::string& field) {
  if (n > remaining()) {
    fail("is truncated or corrupt: " + field + " at offset " + std::to_string(pos_) + " skips " + std::to_string(n) +
         " bytes but only " + std::to_string(remaining()) + " remain");
  }
  pos_ += n;
}

uint64_t BoundedReader::le(unsigned width, const std::string& field, const char* suffix) {
  unsigned char b[8] = {};
  read(reinterpret_cast<char*>(b), width, field, suffix);
  uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) v |= uint64_t{b[i]} << (8 * i);
  return v;
}

uint8_t BoundedReader::u8(const std::string& field) { return static_cast<uint8_t>(le(1, field)); }
uint16_t BoundedReader::u16(const std::string& field) { return static_cast<uint16_t>(le(2, field)); }
uint32_t BoundedReader::u32(const std::string& field) { return static_cast<uint32_t>(le(4, field)); }
uint64_t BoundedReader::u64(const std::string& field) { return le(8, field); }
uint32_t BoundedReader::u32(const std::string& field, const char* suffix) { return static_cast<uint32_t>(le(4, field, suffix)); }
uint64_t BoundedReader::u64(const std::string& field, const char* suffix) { return le(8, field, suffix); }

std::string BoundedReader::string(uint64_t max_len, const std::string& field) {
  // " length" is appended only in a failure message: building that name for every string cost
  // more than the read itself on tokenizer arrays of 10^5 strings (callgrind, docs/performance.md).
  const uint64_t n = u64(field, " length");
  if (n > max_len) fail(field + " at offset " + std::to_string(pos_ - 8) + " claims " + std::to_string(n) + " bytes; at most " + std::to_string(max_len) + " are accepted");
  if (n > remaining()) fail("is truncated or corrupt: " + field + " claims " + std::to_string(n) + " bytes but only " + std::to_string(remaining()) + " remain");
  std::string s(n, '\0');
  bytes(s.data(), n, field);
  return s;
}

}  // namespace vc
