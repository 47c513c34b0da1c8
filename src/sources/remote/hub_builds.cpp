#include "sources/remote/hub_builds.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>

#include "core/checked.h"
#include "core/error.h"
#include "core/text.h"

namespace vc {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// llama.cpp's gguf-split names: PREFIX-%05d-of-%05d.gguf (llama_split_path).
struct SplitName {
  std::string stem;  // PREFIX, or the name without .gguf
  uint32_t part = 1, of = 1;
};

SplitName split_name(const std::string& path) {
  static const std::regex split(R"(^(.*)-([0-9]{5})-of-([0-9]{5})\.gguf$)", std::regex::icase);
  std::smatch m;
  SplitName out;
  if (std::regex_match(path, m, split)) {
    out.stem = m[1].str();
    out.part = static_cast<uint32_t>(std::stoul(m[2].str()));
    out.of = static_cast<uint32_t>(std::stoul(m[3].str()));
  } else {
    out.stem = path.substr(0, path.size() - 5);
  }
  return out;
}

std::string tag_list(const HubLayout& layout) {
  std::string out;
  for (const auto& b : layout.builds) out += (out.empty() ? "" : ", ") + b.tag;
  return out.empty() ? "(none)" : out;
}

}  // namespace

std::string gguf_quant_tag(const std::string& file_name) {
  // The quantization closes the stem, after '-', '.' or '_' (TheBloke's "model.Q4_K_M.gguf").
  static const std::regex quant(R"((?:^|[-._])((?:UD-)?(?:I?Q[0-9]_[A-Z0-9_]*?|TQ[0-9]_[0-9]|BF16|F16|F32|MXFP4(?:_MOE)?))$)", std::regex::icase);
  std::string stem = split_name(base_name(file_name)).stem;
  std::smatch m;
  return std::regex_search(stem, m, quant) ? upper(m[1].str()) : "";
}

HubLayout lay_out_hub_files(const std::vector<HubFile>& files) {
  HubLayout out;
  std::map<std::string, HubBuild> by_stem;
  std::map<std::string, std::map<uint32_t, const HubFile*>> parts;
  for (const auto& f : files) {
    const std::string name = lower(base_name(f.path));
    if (f.path == "model.safetensors.index.json") out.has_index = true;
    if (f.path == "config.json") out.has_config = true;
    if (ends_with(name, ".safetensors")) out.safetensors.push_back(f);
    if (!ends_with(name, ".gguf")) continue;
    if (name.find("mmproj") != std::string::npos) {
      out.mmproj.push_back(f);
      continue;
    }
    const SplitName s = split_name(f.path);
    HubBuild& b = by_stem[s.stem];
    if (b.files.empty() && parts[s.stem].empty()) {
      const std::string tag = gguf_quant_tag(f.path);
      b.tag = tag.empty() ? base_name(s.stem) : tag;
      b.parts_expected = s.of;
    }
    parts[s.stem][s.part] = &f;
  }
  for (auto& [stem, b] : by_stem) {
    for (const auto& [part, f] : parts[stem]) {
      b.files.push_back(f->path);
      b.bytes = checked_add(b.bytes, f->bytes);
    }
    out.builds.push_back(std::move(b));
  }
  std::stable_sort(out.builds.begin(), out.builds.end(), [](const HubBuild& a, const HubBuild& b) { return a.bytes < b.bytes; });
  return out;
}

const HubBuild& pick_hub_build(const HubLayout& layout, const std::string& tag, const std::string& subject) {
  if (layout.builds.empty()) throw InputError(subject, "the repository holds no GGUF model files");
  std::vector<const HubBuild*> found;
  const std::string want = upper(tag.empty() ? "Q4_K_M" : tag);
  for (const auto& b : layout.builds) if (upper(b.tag) == want) found.push_back(&b);
  if (found.empty() && tag.empty() && layout.builds.size() == 1) found.push_back(&layout.builds.front());
  if (found.empty()) {
    throw InputError(subject, tag.empty() ? "the repository has no Q4_K_M build to take by default; name one with hf:ORG/REPO:TAG, builds: " + tag_list(layout)
                                          : "the repository has no build tagged '" + tag + "'; builds: " + tag_list(layout));
  }
  if (found.size() > 1) {
    std::string files;
    for (const auto* b : found) files += (files.empty() ? "" : ", ") + b->files.front();
    throw InputError(subject, "several files carry the tag '" + want + "' (" + files + "); name one with hf:ORG/REPO/FILE");
  }
  const HubBuild& b = *found.front();
  if (!b.complete()) {
    throw InputError(subject, fmt::format("build {} is a split set of {} parts but the repository lists {}", b.tag, b.parts_expected, b.files.size()));
  }
  return b;
}

const HubFile* pick_mmproj(const HubLayout& layout) {
  if (layout.mmproj.empty()) return nullptr;
  for (const char* want : {"F16", "BF16", "F32", "Q8_0"}) {
    for (const auto& f : layout.mmproj) if (gguf_quant_tag(f.path) == want) return &f;
  }
  return &layout.mmproj.front();
}

std::string hub_spec_for_build(const HubSpec& spec, const std::string& subject) {
  const HubLayout layout = lay_out_hub_files(list_hub_repository(spec, subject).files);
  const HubBuild& b = pick_hub_build(layout, spec.tag, subject);
  return "hf:" + spec.repo_id() + "@" + spec.revision + "/" + b.files.front();
}

std::function<std::vector<std::string>(const std::string&)> hub_lister(const HubSpec& spec, const std::string& subject) {
  return [spec, subject](const std::string& ext) -> std::vector<std::string> {
    const HubLayout layout = lay_out_hub_files(list_hub_repository(spec, subject).files);
    std::vector<std::string> out;
    if (ext == ".gguf") {
      if (!layout.builds.empty()) out.push_back(pick_hub_build(layout, "", subject).files.front());
      return out;
    }
    for (const auto& f : layout.safetensors) {
      if (f.path.find('/') == std::string::npos && ends_with(f.path, ext)) out.push_back(f.path);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
}

}  // namespace vc
