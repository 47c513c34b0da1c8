#pragma once
// HTTP(S) resources read by Range requests (libcurl): redirects followed, HF_TOKEN sent as a
// bearer token when set, each fetched range cached on disk under a key made of the URL, the
// server's ETag, the offset and the length. A server that ignores Range is refused before it
// can send the whole file; a progress line goes to stderr when a read takes over a second.
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "sources/io/byte_source.h"

namespace vc {

std::unique_ptr<ByteSource> open_http_source(const std::string& url);

// The whole body of a small resource (an API answer) by one plain GET, through the same client,
// token rule and deadline as range reads; InputError when it is not 200 or exceeds `max_bytes`.
std::string http_get_text(const std::string& url, uint64_t max_bytes);

// True when the URL answers a 1-byte Range request with 206 or 200 (a probe; never throws for
// 404, throws InputError for a server that cannot be reached).
bool http_exists(const std::string& url);

// A time budget for this thread's remote reads (the server bounds /api/inspect with it): each
// request is given the time left, and none starts once it is spent. A nested budget cannot
// extend an outer one. Reads past the budget throw RemoteTimeout.
class RemoteDeadline {
 public:
  explicit RemoteDeadline(std::chrono::milliseconds budget);
  ~RemoteDeadline();
  RemoteDeadline(const RemoteDeadline&) = delete;
  RemoteDeadline& operator=(const RemoteDeadline&) = delete;

 private:
  std::optional<std::chrono::steady_clock::time_point> previous_;
};

// A remote read that ran out of its RemoteDeadline (the server answers 504, not 400).
class RemoteTimeout : public InputError {
 public:
  using InputError::InputError;
};

// The cache folder: VRAMCALC_CACHE_DIR, else $XDG_CACHE_HOME/vramcalc, else ~/.cache/vramcalc.
std::string http_cache_dir();

// Writes a cache file whole or not at all (a temporary file renamed into place); a cache that
// cannot be written is not an error.
void write_cache_file(const std::string& path, const std::string& bytes);

}  // namespace vc
