#include "engines/sglang_lora_adapters.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/error_message.h"
#include "engines/engine_run.h"
#include "engines/vllm_lora_adapters.h"
#include "sources/companion_files.h"
#include "sources/remote/http_source.h"

namespace vc {
namespace {

bool is_remote(const std::string& spec) {
  return spec.rfind("hf:", 0) == 0 || spec.rfind("http://", 0) == 0 || spec.rfind("https://", 0) == 0;
}

}  // namespace

std::string sglang_lora_path_entry(const std::string& entry) {
  if (!entry.empty() && entry.front() == '{') {
    const nlohmann::json j = nlohmann::json::parse(entry, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("lora_path") || !j["lora_path"].is_string() || j["lora_path"].get<std::string>().empty())
      throw InputError("--lora-paths", "a JSON entry needs {\"lora_name\": NAME, \"lora_path\": PATH[, \"pinned\": true|false]}");
    return j["lora_path"].get<std::string>();
  }
  const auto eq = entry.find('=');
  const std::string path = eq == std::string::npos ? entry : entry.substr(eq + 1);
  if (path.empty()) throw InputError("--lora-paths", "an entry has no path; accepted: PATH, NAME=PATH or {\"lora_name\": NAME, \"lora_path\": PATH}");
  return path;
}

std::string sglang_adapter_spec(const std::string& path, AdapterReads reads) {
  if (is_remote(path)) return path;
  std::error_code ec;
  if (reads == AdapterReads::AnyPath && std::filesystem::exists(path, ec)) return path;
  static const std::regex repo_id(R"(^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$)");
  if (std::regex_match(path, repo_id) && path.find("..") == std::string::npos) return "hf:" + path;
  return path;
}

bool sglang_lora_reads_adapters(const SglangLoraSettings& s) {
  const bool targets_given = !s.target_modules.empty() || !s.unmodelled_modules.empty();
  return s.max_loras_per_batch > 0 && !s.adapter_paths.empty() && (!s.max_lora_rank || !targets_given);
}

void read_sglang_lora_adapters(SglangLoraSettings& s, AdapterReads reads) {
  if (!sglang_lora_reads_adapters(s)) return;
  const bool need_rank = !s.max_lora_rank;
  const bool need_targets = s.target_modules.empty() && s.unmodelled_modules.empty();
  if (s.adapter_paths.size() > kMaxSglangAdaptersRead)
    throw InputError("--lora-paths", fmt::format("names {} adapters; at most {} are read (give --max-lora-rank and --lora-target-modules to read none)",
                                                 s.adapter_paths.size(), kMaxSglangAdaptersRead));
  uint64_t largest = 0, unread = 0;
  std::vector<std::string> names;
  for (const auto& path : s.adapter_paths) {
    const std::string spec = sglang_adapter_spec(path, reads);
    if (reads == AdapterReads::RemoteOnly && !is_remote(spec))
      throw InputError("--lora-paths", "'" + path.substr(0, 200) + "' is not an http(s):// URL, hf:ORG/REPO or a Hub repository id ORG/REPO; the server reads no local paths");
    AdapterConfig c;
    try {
      c = read_adapter_config(spec, "--lora-paths");
    } catch (const RemoteTimeout&) {
      throw;
    } catch (const InputError& e) {
      if (need_rank) throw InputError("--max-lora-rank", "is not given, so SGLang takes the largest r of the --lora-paths adapters, but " + message_of(e) + "; give --max-lora-rank R");
      ++unread;
      continue;
    }
    if (need_targets && c.target_modules_shorthand)
      throw InputError("--lora-target-modules", "is not given and the adapter '" + path.substr(0, 200) +
                                                    "' names its target modules by a shorthand (such as all-linear), which SGLang refuses to resolve; give "
                                                    "--lora-target-modules (all, or the module names)");
    largest = std::max(largest, c.rank);
    names.insert(names.end(), c.target_modules.begin(), c.target_modules.end());
  }
  if (need_rank) {
    s.max_lora_rank = largest;
    s.rank_from_adapters = true;
  }
  if (need_targets && unread == 0 && !names.empty()) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    names.erase(std::remove(names.begin(), names.end(), "all"), names.end());  // "all" is the CLI's word, not an adapter module
    if (!names.empty()) {
      set_sglang_lora_targets(s, names);
      s.targets_from_adapters = true;
    }
  }
  s.unread_adapters = unread;
}

void read_command_lora_adapters(std::optional<EngineRun>& command, AdapterReads reads) {
  if (command && command->engine == EngineKind::Sglang) read_sglang_lora_adapters(command->sglang.lora, reads);
  if (command && command->engine == EngineKind::Vllm) read_vllm_lora_adapters(command->vllm.lora, reads);
}

}  // namespace vc
