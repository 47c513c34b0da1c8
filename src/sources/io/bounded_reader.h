#pragma once
// Sequential little-endian reads over a ByteSource, bounded by an end offset: every read checks
// the bytes remaining first, so a hostile length can never read past the end or allocate more
// than the bytes that are really there. Reads are buffered in chunks (one range request each
// for remote sources), each twice the last, up to 64 MiB, or reaching as far as the parser expects
// the header to go (expect_end).
#include <cstdint>
#include <string>
#include <vector>

#include "sources/io/byte_source.h"

namespace vc {

class BoundedReader {
 public:
  // Reads [start, end) of `src`; end is clamped to the source size. `chunk` 0: the source's own.
  BoundedReader(ByteSource& src, uint64_t start, uint64_t end, uint64_t chunk = 0);

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return end_ - pos_; }
  const std::string& label() const { return src_.label(); }

  // `field` names what is being read in the message when the bytes run out.
  void bytes(char* dst, uint64_t n, const std::string& field);
  void skip(uint64_t n, const std::string& field);
  uint8_t u8(const std::string& field);
  uint16_t u16(const std::string& field);
  uint32_t u32(const std::string& field);
  uint64_t u64(const std::string& field);
  // The same, naming the field `field` + `suffix` in a failure message: nothing is built unless
  // the read fails (hot loops over 10^5 tensors and tokens read through these).
  uint32_t u32(const std::string& field, const char* suffix);
  uint64_t u64(const std::string& field, const char* suffix);
  // A string with a u64 length prefix, at most `max_len` bytes.
  std::string string(uint64_t max_len, const std::string& field);

  // A hint from the parser: the header probably reaches `offset`, so the next refill may fetch up
  // to there in one read (one round trip remotely) instead of doubling its way. Only the size of
  // reads changes; a wrong hint costs a read more or some bytes more, never a wrong answer.
  void expect_end(uint64_t offset) { expected_end_ = offset; }

  [[noreturn]] void fail(const std::string& message) const;

 private:
  uint64_t le(unsigned width, const std::string& field, const char* suffix = "");
  void read(char* dst, uint64_t n, const std::string& field, const char* suffix);

  ByteSource& src_;
  uint64_t pos_;
  uint64_t end_;
  uint64_t chunk_;
  std::vector<char> buf_;
  uint64_t buf_start_ = 0;
  uint64_t expected_end_ = 0;
};

}  // namespace vc
