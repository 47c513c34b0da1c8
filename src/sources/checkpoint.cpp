#include "sources/checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/error.h"
#include "core/printable.h"
#include "sources/concurrent_reads.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "sources/gguf/gguf_model.h"
#include "sources/gguf/gguf_set.h"
#include "sources/io/small_text.h"
#include "sources/remote/location.h"
#include "sources/safetensors/safetensors_model.h"
#include "sources/safetensors/safetensors_set.h"

namespace vc {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kMaxConfigBytes = 16 << 20;
constexpr uint64_t kMaxIndexBytes = 64 << 20;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Short text of a GGUF value for inspect's metadata list.
std::string value_text(const GgufValue& v) {
  switch (v.type) {
    case GgufType::String: return v.s.size() > 80 ? v.s.substr(0, 77) + "..." : v.s;
    case GgufType::Array: {
      if (v.count > 16) return fmt::format("[{} {} values]", v.count, to_string(v.elem_type));
      std::string out = "[";
      for (size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + value_text(v.items[i]);
      return out + "]";
    }
    case GgufType::F32: case GgufType::F64: return fmt::format("{}", v.f);
    case GgufType::Bool: return v.u ? "true" : "false";
    case GgufType::I8: case GgufType::I16: case GgufType::I32: case GgufType::I64: return std::to_string(v.i);
    default: return std::to_string(v.u);
  }
}

CheckpointInspection from_gguf(const std::string& location, const Location& loc) {
  GgufSet set = read_gguf_set(location, loc.opener, loc.remote ? kConcurrentRemoteReads : 1);
  CheckpointInspection out;
  out.kind = "GGUF v" + std::to_string(set.files.front().version);
  for (const auto& f : set.files) {
    out.files.push_back(f.label);
    out.file_bytes += f.file_size;
  }
  out.bytes_fetched = set.bytes_fetched;
  out.tally = tally_gguf(set.files);
  for (const auto& key : set.files.front().key_order) {
    if (key.rfind("tokenizer.", 0) == 0) continue;
    out.metadata.emplace_back(key, value_text(*set.files.front().find(key)));
  }
  out.model = model_from_gguf(set.files);
  return out;
}

CheckpointInspection from_safetensors(const std::vector<std::string>& shards, const std::string& config, const Location& loc) {
  SafetensorsSet set = read_safetensors_set(shards, loc.opener, loc.remote ? kConcurrentRemoteReads : 1);
  CheckpointInspection out;
  out.kind = "safetensors";
  for (const auto& f : set.files) {
    out.files.push_back(f.label);
    out.file_bytes += f.file_size;
    for (const auto& [k, v] : f.metadata) out.metadata.emplace_back(k, v.size() > 80 ? v.substr(0, 77) + "..." : v);
  }
  out.bytes_fetched = set.bytes_fetched;
  std::optional<std::string> text;
  try {
    text = read_small_text(config, loc.opener, kMaxConfigBytes);
  } catch (const InputError& e) {
    out.no_model = "no readable config.json beside the weights (" + std::string(e.what()) + "); the layer geometry comes from it";
  }
  if (text) {
    out.files.push_back(config);
    out.bytes_fetched += text->size();
    Model m = model_from_checkpoint(parse_config_text(*text, config), config, set.files);
    m.id = loc.display;
    m.name = loc.name;
    out.model = std::move(m);
    out.tally = tally_safetensors(set.files, out.model->layers.size());
  } else {
    out.tally = tally_safetensors(set.files, 0);
  }
  return out;
}

CheckpointInspection from_config(const std::string& config, const Location& loc) {
  std::string text = read_small_text(config, loc.opener, kMaxConfigBytes);
  CheckpointInspection out;
  out.kind = "config.json";
  out.files = {config};
  out.file_bytes = out.bytes_fetched = text.size();
  Model m = model_from_config(parse_config_text(text, config), config);
  m.id = loc.display;
  m.name = loc.name;
  out.model = std::move(m);
  return out;
}

// A folder (local) or repository root (remote): index, shards, config.json, or one GGUF.
CheckpointInspection from_folder(const Location& loc, const std::string& subject) {
  const std::string config = loc.join("config.json");
  const std::string index = loc.join("model.safetensors.index.json");
  if (loc.exists("model.safetensors.index.json")) {
    std::string text = read_small_text(index, loc.opener, kMaxIndexBytes);
    std::vector<std::string> shards;
    for (const auto& n : safetensors_index_files(text, index)) shards.push_back(loc.join(n));
    auto out = from_safetensors(shards, config, loc);
    out.files.insert(out.files.begin(), index);
    out.bytes_fetched += text.size();
    return out;
  }
  std::vector<std::string> safetensors = loc.list(".safetensors");
  if (!safetensors.empty()) {
    std::vector<std::string> shards;
    for (const auto& n : safetensors) shards.push_back(loc.join(n));
    return from_safetensors(shards, config, loc);
  }
  std::vector<std::string> ggufs = loc.list(".gguf");
  if (!ggufs.empty()) {
    // One model (or one split set) per folder; anything else needs the file named.
    std::vector<std::string> firsts;
    for (const auto& g : ggufs) if (g.find("-of-") == std::string::npos || g.find("-00001-of-") != std::string::npos) firsts.push_back(g);
    if (firsts.size() == 1) return from_gguf(loc.join(firsts.front()), loc);
    throw InputError(subject, "folder '" + loc.display + "' holds several GGUF models; name one: " + fmt::format("{}", fmt::join(firsts, ", ")));
  }
  if (loc.exists("config.json")) return from_config(config, loc);
  throw InputError(subject, "'" + loc.display + "' holds no config.json, *.safetensors, model.safetensors.index.json or *.gguf" +
                                std::string(loc.remote ? "; for a GGUF repository name the file (hf:ORG/REPO/FILE.gguf)" : ""));
}

}  // namespace

bool looks_like_location(const std::string& spec) {
  if (spec.rfind("http://", 0) == 0 || spec.rfind("https://", 0) == 0 || spec.rfind("hf:", 0) == 0) return true;
  std::error_code ec;
  return fs::exists(spec, ec);
}

namespace {

CheckpointInspection inspect_unguarded(const std::string& spec, const std::string& subject) {
  Location loc = resolve_location(spec, subject);
  if (loc.is_folder) return from_folder(loc, subject);
  const std::string& file = loc.file;
  if (ends_with(file, ".gguf")) return from_gguf(file, loc);
  if (ends_with(file, ".safetensors")) return from_safetensors({file}, loc.parent_join("config.json"), loc);
  if (ends_with(file, "model.safetensors.index.json")) {
    std::string text = read_small_text(file, loc.opener, kMaxIndexBytes);
    std::vector<std::string> shards;
    for (const auto& n : safetensors_index_files(text, file)) shards.push_back(loc.parent_join(n));
    auto out = from_safetensors(shards, loc.parent_join("config.json"), loc);
    out.files.insert(out.files.begin(), file);
    return out;
  }
  // Sniff: a GGUF by magic whatever its name, else a config.json.
  auto src = loc.opener(file);
  if (src->size() >= 4) {
    char magic[4];
    src->read_at(0, magic, 4);
    if (std::string(magic, 4) == "GGUF") return from_gguf(file, loc);
  }
  return from_config(file, loc);
}

}  // namespace

// Every reader's own errors are InputErrors; anything else a hostile file can provoke (a JSON type
// or range error, a container's length check) is still the file's fault: exit 2 / HTTP 400 naming
// it, never an internal error.
CheckpointInspection inspect_checkpoint(const std::string& spec, const std::string& subject) {
  try {
    CheckpointInspection out = inspect_unguarded(spec, subject);
    // Text read from the files reaches reports and terminals: no control characters (a name
    // holding "\n" could forge report lines, an escape sequence rewrite the screen).
    for (auto& [key, value] : out.metadata) {
      key = printable(key);
      value = printable(value);
    }
    for (auto& f : out.files) f = printable(f);
    if (out.model) {
      out.model->name = printable(out.model->name);
      out.model->architecture = printable(out.model->architecture);
      for (auto& w : out.model->warnings) w = printable(w);
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(subject, "'" + spec.substr(0, 200) + "' holds a value of the wrong type or range: " + e.what());
  } catch (const std::logic_error& e) {
    throw InputError(subject, "'" + spec.substr(0, 200) + "' holds values this reader cannot use: " + e.what());
  }
}

}  // namespace vc
