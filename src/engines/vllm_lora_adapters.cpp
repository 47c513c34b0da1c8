#include "engines/vllm_lora_adapters.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "sources/companion_files.h"
#include "sources/remote/http_source.h"

namespace vc {
namespace {

bool is_remote(const std::string& spec) {
  return spec.rfind("hf:", 0) == 0 || spec.rfind("http://", 0) == 0 || spec.rfind("https://", 0) == 0;
}

// The smallest --max-lora-rank vLLM accepts that holds `rank` (vllm_lora.h parse_max_lora_rank), 0 when none does.
uint64_t accepted_rank_at_least(uint64_t rank) {
  static constexpr std::array<uint64_t, 9> kRanks = {1, 8, 16, 32, 64, 128, 256, 320, 512};
  for (const uint64_t r : kRanks)
    if (r >= rank) return r;
  return 0;
}

}  // namespace

std::string vllm_lora_module_entry(const std::string& entry) {
  if (!entry.empty() && entry.front() == '{') {
    const nlohmann::json j = nlohmann::json::parse(entry, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("name") || !j.contains("path") || !j["path"].is_string() || j["path"].get<std::string>().empty())
      throw InputError("--lora-modules", "a JSON entry needs {\"name\": NAME, \"path\": PATH[, \"base_model_name\": MODEL]}");
    return j["path"].get<std::string>();
  }
  const auto eq = entry.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size())
    throw InputError("--lora-modules", "an entry is not NAME=PATH or {\"name\": NAME, \"path\": PATH}, the forms vLLM accepts");
  return entry.substr(eq + 1);
}

void read_vllm_lora_adapters(LoraSlotSettings& s, AdapterReads reads) {
  s.adapters_checked = s.adapters_unread = s.largest_adapter_rank = 0;
  if (s.max_loras == 0 || s.adapter_paths.empty()) return;
  if (s.adapter_paths.size() > kMaxVllmAdaptersRead)
    throw InputError("--lora-modules", fmt::format("names {} adapters; at most {} are read", s.adapter_paths.size(), kMaxVllmAdaptersRead));
  std::string largest_path;
  bool largest_from_pattern = false;
  for (const auto& path : s.adapter_paths) {
    const std::string spec = sglang_adapter_spec(path, reads);  // a folder as written, else a Hub repository id: as vLLM resolves it
    if (reads == AdapterReads::RemoteOnly && !is_remote(spec)) {
      ++s.adapters_unread;
      continue;
    }
    AdapterConfig c;
    try {
      c = read_adapter_config(spec, "--lora-modules");
    } catch (const RemoteTimeout&) {
      throw;
    } catch (const InputError&) {
      ++s.adapters_unread;
      continue;
    }
    ++s.adapters_checked;
    if (c.largest_rank() > s.largest_adapter_rank) {
      s.largest_adapter_rank = c.largest_rank();
      largest_path = path.substr(0, 200);
      largest_from_pattern = c.largest_rank() > c.rank;
    }
  }
  if (s.largest_adapter_rank > s.max_lora_rank) {
    const uint64_t fits = accepted_rank_at_least(s.largest_adapter_rank);
    const std::string refusal =
        largest_from_pattern
            ? fmt::format("the largest rank its adapter_config.json's rank_pattern gives a module): vLLM fails at start, that module's A and B not fitting "
                          "the {} rows of its slot (set_lora)",
                          s.max_lora_rank)
            : fmt::format("its adapter_config.json's r): vLLM refuses it at start (\"LoRA rank {} is greater than max_lora_rank {}.\")", s.largest_adapter_rank,
                          s.max_lora_rank);
    throw InputError("--max-lora-rank", fmt::format("{} is below the rank {} of the --lora-modules adapter '{}' ({}; {}", s.max_lora_rank, s.largest_adapter_rank,
                                                    largest_path, refusal,
                                                    fits ? fmt::format("give --max-lora-rank {}", fits) : std::string("vLLM accepts at most 512")));
  }
}

std::string vllm_lora_adapters_note(const LoraSlotSettings& s) {
  if (s.max_loras == 0 || s.adapter_paths.empty()) return {};
  std::string note;
  if (s.adapters_checked)
    note = fmt::format("--lora-modules: {} adapter config(s) read, largest rank {} (r, or a rank_pattern's) within --max-lora-rank {}, as vLLM checks at start",
                       s.adapters_checked, s.largest_adapter_rank, s.max_lora_rank);
  if (s.adapters_unread)
    note += fmt::format("{}{} --lora-modules adapter config(s) not read, their rank not checked against --max-lora-rank {}", note.empty() ? "" : "; ",
                        s.adapters_unread, s.max_lora_rank);
  return note;
}

}  // namespace vc
