#include "sources/remote/hub_repo.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/error.h"
#include "sources/remote/http_source.h"

namespace vc {
namespace {

constexpr uint64_t kMaxListingBytes = uint64_t{32} << 20;
constexpr size_t kMaxFiles = 100000;
constexpr size_t kMaxPath = 1000;

bool is_commit_id(const std::string& rev) {
  static const std::regex hex40("^[0-9a-f]{40}$");
  return std::regex_match(rev, hex40);
}

// A repository path we are willing to join to a URL: relative, no "..", no control characters.
bool safe_path(const std::string& p) {
  if (p.empty() || p.size() > kMaxPath || p.front() == '/' || p.find("..") != std::string::npos) return false;
  for (unsigned char c : p) {
    if (c < 0x20 || c == 0x7f || c == '\\' || c == '?' || c == '#') return false;
  }
  return true;
}

std::string utc_now() {
  const auto now = std::chrono::floor<std::chrono::minutes>(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%MZ}", now);
}

}  // namespace

const HubFile* HubListing::find(const std::string& path) const {
  for (const auto& f : files) if (f.path == path) return &f;
  return nullptr;
}

std::string hub_listing_url(const HubSpec& spec) {
  std::string rev;
  for (char c : spec.revision) rev += c == '/' ? std::string("%2F") : std::string(1, c);
  return hf_endpoint() + "/api/models/" + spec.repo_id() + "/revision/" + rev + "?blobs=true";
}

HubListing parse_hub_listing(const std::string& text, const std::string& url) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw InputError(url, "the Hub answered something that is not a JSON object; expected a model listing");
  const auto siblings = doc.find("siblings");
  if (siblings == doc.end() || !siblings->is_array()) throw InputError(url, "the Hub's answer has no \"siblings\" list of files");
  if (siblings->size() > kMaxFiles) throw InputError(url, fmt::format("the repository lists {} files; at most {} are read", siblings->size(), kMaxFiles));
  HubListing out;
  out.api_url = url;
  if (auto sha = doc.find("sha"); sha != doc.end() && sha->is_string() && sha->get_ref<const std::string&>().size() <= 64) out.commit = *sha;
  if (auto lm = doc.find("lastModified"); lm != doc.end() && lm->is_string() && lm->get_ref<const std::string&>().size() <= 64) out.last_modified = *lm;
  for (const auto& s : *siblings) {
    if (!s.is_object()) throw InputError(url, "a \"siblings\" entry is not an object");
    auto name = s.find("rfilename");
    if (name == s.end() || !name->is_string()) throw InputError(url, "a \"siblings\" entry has no \"rfilename\"");
    const std::string& path = name->get_ref<const std::string&>();
    if (!safe_path(path)) throw InputError(url, "the listing names an unusable path '" + path.substr(0, 120) + "'");
    HubFile f;
    f.path = path;
    // LFS files: "size" is the file's size (huggingface_hub's RepoSibling.size); lfs.size says the same.
    auto lfs = s.find("lfs");
    auto size = s.find("size");
    if (lfs != s.end() && lfs->is_object() && lfs->contains("size") && (*lfs)["size"].is_number_unsigned()) f.bytes = (*lfs)["size"].get<uint64_t>();
    else if (size != s.end() && size->is_number_unsigned()) f.bytes = size->get<uint64_t>();
    else throw InputError(url, "the listing gives no size for '" + path.substr(0, 120) + "' (the request asks for blobs=true)");
    out.files.push_back(std::move(f));
  }
  return out;
}

HubListing list_hub_repository(const HubSpec& spec, const std::string& subject) {
  static std::mutex mu;
  static std::map<std::string, HubListing> seen;  // one read per process and listing
  const std::string url = hub_listing_url(spec);
  // A private repository's listing must never answer a caller without its token (the server
  // serves callers with different tokens): the process cache is keyed by the token's hash, and
  // only listings read without a token go to disk.
  const std::string token = token_for_url(url);
  const std::string key = token.empty() ? url : url + "\ntoken " + std::to_string(std::hash<std::string>{}(token));
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = seen.find(key); it != seen.end()) return it->second;
  }
  // A listing at a commit id never changes, so it is cached on disk like a range (integrity
  // check, 0700/0600, the size cap); a branch or tag is listed afresh once per process.
  const std::string immutable_tag = token.empty() && is_commit_id(spec.revision) ? "commit:" + spec.revision : "";
  HubListing out;
  try {
    out = parse_hub_listing(http_get_text(url, kMaxListingBytes, immutable_tag), url);
  } catch (const RemoteTimeout&) {
    throw;
  } catch (const RemoteError& e) {
    throw RemoteError(subject, "cannot list hf:" + spec.repo_id() + "@" + spec.revision + ": " + e.what());
  } catch (const InputError& e) {
    throw InputError(subject, "cannot list hf:" + spec.repo_id() + "@" + spec.revision + ": " + e.what());
  }
  out.repo_id = spec.repo_id();
  out.revision = spec.revision;
  out.read_at = utc_now();
  std::lock_guard<std::mutex> lock(mu);
  if (seen.size() >= 64) seen.clear();  // a long-running server lists many repositories: stay bounded
  seen[key] = out;
  return out;
}

}  // namespace vc
