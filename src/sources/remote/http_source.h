#pragma once
// HTTP(S) resources read by Range requests (libcurl): redirects followed, HF_TOKEN sent as a
// bearer token when set, each fetched range cached on disk under a key made of the URL, the
// server's ETag, the offset and the length. A server that ignores Range is refused before it
// can send the whole file; a progress line goes to stderr when a read takes over a second.
#include <memory>
#include <string>

#include "sources/io/byte_source.h"

namespace vc {

std::unique_ptr<ByteSource> open_http_source(const std::string& url);

// True when the URL answers a 1-byte Range request with 206 or 200 (a probe; never throws for
// 404, throws InputError for a server that cannot be reached).
bool http_exists(const std::string& url);

// The cache folder: VRAMCALC_CACHE_DIR, else $XDG_CACHE_HOME/vramcalc, else ~/.cache/vramcalc.
std::string http_cache_dir();

}  // namespace vc
