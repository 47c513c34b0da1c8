#pragma once
// Random access to the bytes of a checkpoint: a local file or an HTTP resource read by ranges.
// Readers only ever ask for headers, so a source must never be read whole.
#include <cstdint>
#include <memory>
#include <string>

namespace vc {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // The path or URL, for messages.
  virtual const std::string& label() const = 0;
  virtual uint64_t size() const = 0;
  // Exactly `n` bytes at `offset`; an InputError naming the source when they are not there.
  virtual void read_at(uint64_t offset, char* dst, uint64_t n) = 0;
  // Bytes fetched so far (remote sources count the network; files count reads).
  virtual uint64_t bytes_fetched() const = 0;
  // How much a sequential reader should ask for at once: small for files, a round trip's worth
  // for HTTP.
  virtual uint64_t preferred_chunk() const { return uint64_t{64} << 10; }
};

// A local file, read with pread-like seeks.
std::unique_ptr<ByteSource> open_file_source(const std::string& path);

}  // namespace vc
