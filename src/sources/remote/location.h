#pragma once
// Where a MODEL lives: a local path, an http(s):// URL or hf:ORG/REPO[@REVISION][:TAG|/FILE]
// (resolved against VRAMCALC_HF_ENDPOINT or --hf-endpoint, default https://huggingface.co).
// Gives the readers one way to name, open, probe and list files in either place.
#include <functional>
#include <string>
#include <vector>

#include "sources/io/opener.h"

namespace vc {

struct Location {
  bool is_folder = false;
  bool remote = false;
  std::string file;     // the file itself when !is_folder
  std::string base;     // the folder (path or URL prefix, no trailing '/')
  std::string display;  // as the user wrote it
  std::string name;     // folder or repository name, for the model's name
  Opener opener;
  std::function<bool(const std::string&)> exists_fn;
  std::function<std::vector<std::string>(const std::string&)> list_fn;

  std::string join(const std::string& n) const { return base + "/" + n; }
  // A sibling of `file` (config.json beside a .safetensors).
  std::string parent_join(const std::string& n) const;
  bool exists(const std::string& n) const { return exists_fn(n); }
  // File names in the folder ending with `ext`, sorted (hf: repositories: from the Hub API;
  // other remote folders: only the conventional single-file name, since HTTP has no listing).
  std::vector<std::string> list(const std::string& ext) const { return list_fn(ext); }
};

// The endpoint hf: specs resolve against; set by --hf-endpoint, else VRAMCALC_HF_ENDPOINT.
void set_hf_endpoint(const std::string& endpoint);
std::string hf_endpoint();

// The parts of hf:ORG/REPO[@REV][:TAG][/FILE]; REV defaults to main. TAG picks a GGUF build as
// llama.cpp's `-hf ORG/REPO:TAG` does (sources/remote/hub_builds.h); it cannot go with a FILE.
struct HubSpec {
  std::string org, repo, revision, file, tag;
  std::string repo_id() const { return org + "/" + repo; }
};
HubSpec parse_hf_spec(const std::string& spec, const std::string& subject);

// hf:ORG/REPO[@REV][/FILE] -> https://ENDPOINT/ORG/REPO/resolve/REV/FILE (REV default main).
// `file` empty for a repository root. InputError(subject) for a malformed spec.
std::string hf_url(const std::string& spec, const std::string& subject, bool& is_repo_root, std::string* repo = nullptr);

Location resolve_location(const std::string& spec, const std::string& subject);

}  // namespace vc
