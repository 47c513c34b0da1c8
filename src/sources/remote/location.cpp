#include "sources/remote/location.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "core/error.h"
#include "sources/remote/hub_builds.h"
#include "sources/remote/http_source.h"

namespace vc {
namespace {

namespace fs = std::filesystem;
std::string g_endpoint;

std::string strip_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::string last_part(const std::string& s) {
  auto slash = s.find_last_of('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

Location local(const std::string& spec, const std::string& subject) {
  Location loc;
  loc.display = spec;
  loc.opener = [](const std::string& p) { return open_file_source(p); };
  std::error_code ec;
  fs::path p(spec);
  if (fs::is_directory(p, ec)) {
    loc.is_folder = true;
    loc.base = strip_slash(spec);
    loc.name = fs::absolute(p, ec).lexically_normal().filename().string();
    if (loc.name.empty()) loc.name = last_part(loc.base);
  } else if (fs::is_regular_file(p, ec)) {
    loc.file = spec;
    loc.base = p.parent_path().empty() ? "." : p.parent_path().string();
    loc.name = fs::absolute(p, ec).parent_path().filename().string();
  } else {
    throw InputError(subject, "'" + spec + "' is not a file or folder");
  }
  const std::string base = loc.base;
  loc.exists_fn = [base](const std::string& n) {
    std::error_code e;
    return fs::is_regular_file(fs::path(base) / n, e);
  };
  loc.list_fn = [base](const std::string& ext) {
    std::vector<std::string> out;
    std::error_code e;
    size_t seen = 0;
    for (const auto& entry : fs::directory_iterator(base, e)) {
      if (++seen > 100000) throw InputError(base, "holds more than 100,000 entries; name the file");
      const std::string n = entry.path().filename().string();
      if (entry.is_regular_file(e) && n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  return loc;
}

Location remote(const std::string& url, const std::string& display, bool folder, const std::string& name) {
  Location loc;
  loc.remote = true;
  loc.display = display;
  loc.is_folder = folder;
  loc.name = name;
  loc.opener = [](const std::string& u) { return open_http_source(u); };
  if (folder) {
    loc.base = strip_slash(url);
  } else {
    loc.file = url;
    loc.base = url.substr(0, url.find_last_of('/'));
  }
  const std::string base = loc.base;
  loc.exists_fn = [base](const std::string& n) { return http_exists(base + "/" + n); };
  loc.list_fn = [base](const std::string& ext) -> std::vector<std::string> {
    if (ext == ".safetensors" && http_exists(base + "/model.safetensors")) return {"model.safetensors"};
    return {};
  };
  return loc;
}

}  // namespace

void set_hf_endpoint(const std::string& endpoint) { g_endpoint = strip_slash(endpoint); }

std::string hf_endpoint() {
  if (!g_endpoint.empty()) return g_endpoint;
  if (const char* e = std::getenv("VRAMCALC_HF_ENDPOINT"); e && *e) return strip_slash(e);
  return "https://huggingface.co";
}

HubSpec parse_hf_spec(const std::string& spec, const std::string& subject) {
  // ORG/REPO, then optional @REV, then optional :TAG or /FILE (which may have folders).
  static const std::regex pattern(R"(^hf:([A-Za-z0-9][A-Za-z0-9._-]{0,95})/([A-Za-z0-9][A-Za-z0-9._-]{0,95})(@[A-Za-z0-9._/-]{1,200}?)?(:[A-Za-z0-9._-]{1,100})?(/[^@:]{1,1000})?$)");
  std::smatch m;
  if (!std::regex_match(spec, m, pattern) || spec.find("..") != std::string::npos || (m[4].matched && m[5].matched)) {
    throw InputError(subject, "'" + spec + "' is not hf:ORG/REPO[@REVISION][:TAG|/FILE] (e.g. hf:Qwen/Qwen3-8B, hf:org/repo-GGUF:Q4_K_M, hf:org/repo@main/model.gguf)");
  }
  HubSpec out;
  out.org = m[1].str();
  out.repo = m[2].str();
  out.revision = m[3].matched ? m[3].str().substr(1) : "main";
  out.tag = m[4].matched ? m[4].str().substr(1) : "";
  out.file = m[5].matched ? m[5].str().substr(1) : "";
  return out;
}

std::string hf_url(const std::string& spec, const std::string& subject, bool& is_repo_root, std::string* repo) {
  const HubSpec hub = parse_hf_spec(spec, subject);
  is_repo_root = hub.file.empty();
  if (repo) *repo = hub.repo;
  std::string url = hf_endpoint() + "/" + hub.org + "/" + hub.repo + "/resolve/" + hub.revision;
  if (!hub.file.empty()) url += "/" + hub.file;
  return url;
}

Location resolve_location(const std::string& spec, const std::string& subject) {
  if (spec.rfind("hf:", 0) == 0) {
    const HubSpec hub = parse_hf_spec(spec, subject);
    if (!hub.tag.empty()) {  // hf:ORG/REPO:TAG names the build's first file, as llama.cpp's -hf does
      Location loc = resolve_location(hub_spec_for_build(hub, subject), subject);
      loc.display = spec;
      return loc;
    }
    bool root = false;
    std::string repo;
    std::string url = hf_url(spec, subject, root, &repo);
    Location loc = remote(url, spec, root, repo);
    if (root) loc.list_fn = hub_lister(hub, subject);  // the Hub API lists what HTTP cannot
    return loc;
  }
  if (spec.rfind("http://", 0) == 0 || spec.rfind("https://", 0) == 0) {
    const std::string tail = last_part(strip_slash(spec));
    const bool file = tail.find('.') != std::string::npos && tail.find('.') != 0;
    std::string name = file ? last_part(spec.substr(0, spec.find_last_of('/'))) : tail;
    return remote(spec, spec, !file, name);
  }
  return local(spec, subject);
}

std::string Location::parent_join(const std::string& n) const { return base + "/" + n; }

}  // namespace vc
