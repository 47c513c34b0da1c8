#pragma once
// The disk cache of fetched header ranges. A range is stored under a key made of the URL, the
// server's ETag, the offset and the length; each file carries the length and a hash of its bytes,
// checked on every read (a truncated or edited entry is dropped and fetched again). The folder is
// the owner's alone (0700, files 0600), and its total size is capped (VRAMCALC_CACHE_MAX, default
// 1 GiB): past it, the least recently used entries go.
#include <cstdint>
#include <optional>
#include <string>

namespace vc {

// The cache folder: VRAMCALC_CACHE_DIR, else $XDG_CACHE_HOME/vramcalc, else ~/.cache/vramcalc
// ("" when none can be named: nothing is cached).
std::string range_cache_dir();

// The cap in bytes: VRAMCALC_CACHE_MAX (a size such as 512MiB or 2GB; 0 turns the cache off),
// else 1 GiB. An unreadable value is an InputError naming VRAMCALC_CACHE_MAX.
uint64_t range_cache_max();

// The stored bytes of a range, when present and intact.
std::optional<std::string> range_cache_get(const std::string& url, const std::string& etag, uint64_t offset, uint64_t n);

// Stores a range; a cache that cannot be written is not an error (the read already succeeded).
void range_cache_put(const std::string& url, const std::string& etag, uint64_t offset, const std::string& bytes);

}  // namespace vc
