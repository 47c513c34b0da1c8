#pragma once
// A Hugging Face repository's file list, read through the Hub API the way huggingface_hub's
// model_info(files_metadata=True) does: GET {endpoint}/api/models/{org}/{repo}/revision/{rev}?blobs=true
// answers {"sha", "lastModified", "siblings": [{"rfilename", "size", "lfs": {"size"}}]}.
// The answer is bounded (32 MiB, 100,000 files), each path checked, and kept for the process; a
// listing at a commit id (40 hex digits) never changes, so it is also cached on disk (range_cache.h).
#include <cstdint>
#include <string>
#include <vector>

#include "sources/remote/location.h"

namespace vc {

struct HubFile {
  std::string path;    // inside the repository, "Q4_K_M/model-Q4_K_M-00001-of-00002.gguf"
  uint64_t bytes = 0;  // the file itself (lfs.size for LFS files, not the pointer)
};

struct HubListing {
  std::string repo_id;        // ORG/REPO
  std::string revision;       // as asked ("main")
  std::string commit;         // the commit the Hub answered for ("sha")
  std::string last_modified;  // the Hub's "lastModified"
  std::string read_at;        // when vramcalc read it, UTC ("2026-11-30T12:20Z")
  std::string api_url;
  std::vector<HubFile> files;

  const HubFile* find(const std::string& path) const;
};

// The listing for spec's repository and revision; InputError(subject) when the Hub refuses it or
// answers something that is not a listing.
HubListing list_hub_repository(const HubSpec& spec, const std::string& subject);

// Reads an API answer (exposed for the tests); InputError(url) when it is malformed.
HubListing parse_hub_listing(const std::string& text, const std::string& url);

// {endpoint}/api/models/ORG/REPO/revision/REV?blobs=true, REV percent-encoded.
std::string hub_listing_url(const HubSpec& spec);

}  // namespace vc
