#include "sources/companion_files.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/checked.h"
#include "core/error.h"
#include "core/text.h"
#include "sources/io/small_text.h"
#include "sources/remote/http_source.h"
#include "sources/remote/hub_builds.h"
#include "sources/remote/location.h"
#include "sources/safetensors/safetensors_file.h"

namespace vc {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string find_mmproj_beside(const std::string& model_spec, const std::string& subject) {
  if (model_spec.rfind("hf:", 0) == 0) {
    const HubSpec hub = parse_hf_spec(model_spec, subject);
    const HubLayout layout = lay_out_hub_files(list_hub_repository(hub, subject).files);
    const HubFile* f = pick_mmproj(layout);
    if (!f) throw InputError(subject, "hf:" + hub.repo_id() + " holds no mmproj GGUF; name one with --mmproj FILE");
    return "hf:" + hub.repo_id() + "@" + hub.revision + "/" + f->path;
  }
  if (model_spec.rfind("http://", 0) == 0 || model_spec.rfind("https://", 0) == 0) {
    throw InputError(subject, "'auto' cannot list the folder of a URL; give the mmproj's URL with --mmproj URL");
  }
  std::error_code ec;
  const fs::path dir = fs::is_directory(model_spec, ec) ? fs::path(model_spec) : fs::path(model_spec).parent_path();
  std::vector<HubFile> found;
  size_t seen = 0;
  for (const auto& entry : fs::directory_iterator(dir.empty() ? fs::path(".") : dir, ec)) {
    if (++seen > 100000) throw InputError(subject, "the model's folder holds more than 100,000 entries; name the mmproj with --mmproj FILE");
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && ends_with(lower(name), ".gguf") && lower(name).find("mmproj") != std::string::npos) found.push_back({entry.path().string(), 0});
  }
  std::sort(found.begin(), found.end(), [](const HubFile& a, const HubFile& b) { return a.path < b.path; });
  HubLayout layout;
  layout.mmproj = found;
  const HubFile* f = pick_mmproj(layout);
  if (!f) throw InputError(subject, "no *mmproj*.gguf beside '" + model_spec + "'; name one with --mmproj FILE");
  return f->path;
}

GgufFile read_gguf_header(const std::string& spec, const std::string& subject) {
  Location loc = resolve_location(spec, subject);
  if (loc.is_folder) throw InputError(subject, "'" + spec + "' is a folder; name the .gguf file");
  auto src = loc.opener(loc.file);
  return read_gguf(*src);
}

AdapterFile read_adapter(const std::string& spec, const std::string& subject) {
  Location loc = resolve_location(spec, subject);
  if (loc.is_folder) {
    if (!loc.exists("adapter_model.safetensors")) throw InputError(subject, "'" + spec + "' holds no adapter_model.safetensors; name the adapter file");
    loc.file = loc.join("adapter_model.safetensors");
  }
  AdapterFile out;
  out.file = loc.file;
  auto src = loc.opener(loc.file);
  char magic[4] = {0, 0, 0, 0};
  if (src->size() >= 4) src->read_at(0, magic, 4);
  if (std::string(magic, 4) == "GGUF") {
    const GgufFile f = read_gguf(*src);
    out.format = "GGUF";
    out.tensors = f.tensors.size();
    out.bytes = f.tensor_bytes();
    return out;
  }
  const SafetensorsFile f = read_safetensors(*src);
  out.format = "safetensors";
  out.tensors = f.tensors.size();
  for (const auto& t : f.tensors) out.bytes = checked_add(out.bytes, t.bytes());
  return out;
}

AdapterConfig read_adapter_config(const std::string& spec, const std::string& subject) {
  constexpr uint64_t kMaxAdapterConfigBytes = 1 << 20;  // PEFT writes a few hundred bytes
  constexpr uint64_t kMaxRank = 1 << 16;
  const Location loc = resolve_location(spec, subject);
  AdapterConfig out;
  const std::string name = "adapter_config.json";
  if (loc.is_folder) out.file = loc.join(name);
  else out.file = ends_with(loc.file, "/" + name) || loc.file == name ? loc.file : loc.parent_join(name);
  if (loc.is_folder && !loc.exists(name)) throw InputError(subject, "'" + spec + "' holds no adapter_config.json");
  std::string text;
  try {
    text = read_small_text(out.file, loc.opener, kMaxAdapterConfigBytes);
  } catch (const InputError& e) {
    if (dynamic_cast<const RemoteError*>(&e)) throw;
    throw InputError(subject, "the adapter_config.json of '" + spec + "' cannot be read (missing, or over 1 MiB)");
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw InputError(subject, "the adapter_config.json of '" + spec + "' is not a JSON object");
  const auto r = j.find("r");
  if (r == j.end() || !r->is_number_unsigned() || r->get<uint64_t>() == 0 || r->get<uint64_t>() > kMaxRank)
    throw InputError(subject, "the adapter_config.json of '" + spec + "' has no rank r from 1 to 65,536");
  out.rank = r->get<uint64_t>();
  // rank_pattern in the file's order (PEFT takes the first key that matches, in dict order).
  const nlohmann::ordered_json o = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto rp = o.find("rank_pattern");
  if (rp != o.end() && !rp->is_null()) {
    if (!rp->is_object() || rp->size() > 4096)
      throw InputError(subject, "the adapter_config.json of '" + spec + "' has a rank_pattern that is not an object of at most 4,096 module patterns");
    for (const auto& [key, value] : rp->items()) {
      if (key.empty() || key.size() > 1000 || !value.is_number_unsigned() || value.get<uint64_t>() == 0 || value.get<uint64_t>() > kMaxRank)
        throw InputError(subject, "the adapter_config.json of '" + spec + "' has a rank_pattern entry that is not a module pattern with a rank from 1 to 65,536");
      out.rank_pattern.emplace_back(key, value.get<uint64_t>());
    }
  }
  const auto t = j.find("target_modules");
  if (t != j.end() && t->is_string()) {
    out.target_modules_shorthand = true;
  } else if (t != j.end() && t->is_array() && t->size() <= 1024) {
    for (const auto& m : *t) {
      if (!m.is_string() || m.get<std::string>().empty() || m.get<std::string>().size() > 200)
        throw InputError(subject, "the adapter_config.json of '" + spec + "' lists a target module that is not a name");
      out.target_modules.push_back(m.get<std::string>());
    }
  } else {
    throw InputError(subject, "the adapter_config.json of '" + spec + "' has no target_modules list (at most 1,024 names) or shorthand");
  }
  return out;
}

uint64_t AdapterConfig::largest_rank() const {
  uint64_t largest = rank;
  for (const auto& [key, r] : rank_pattern) largest = std::max(largest, r);
  return largest;
}

}  // namespace vc
