#include "server/caller_files.h"

#include <fmt/format.h>

#include <atomic>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "core/error_message.h"
#include "engines/engine_run.h"
#include "engines/sglang_lora_adapters.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "sources/remote/http_source.h"
#include "sources/remote/location.h"

namespace vc::server {
namespace {

std::atomic<int64_t> g_remote_timeout_ms{15'000};

bool is_remote_spec(const std::string& spec) {
  return spec.rfind("hf:", 0) == 0 || spec.rfind("http://", 0) == 0 || spec.rfind("https://", 0) == 0;
}

// A client must not make the server open its own files: anything but a remote spec is refused.
void require_remote(const std::string& spec, const std::string& field, const std::string& also_accepted = "") {
  if (is_remote_spec(spec)) return;
  throw InputError(field, "'" + spec.substr(0, 200) + "' is not an http(s):// URL or hf:ORG/REPO[@REVISION][/FILE]" + also_accepted + "; the server reads no local paths");
}

std::string bare(const std::string& subject) { return subject.rfind("--", 0) == 0 ? subject.substr(2) : subject; }

// A failed remote read as a client may see it (always throws): past the budget a RemoteTimeout
// (504); a transfer's failure in our words; a reader's error about the content, which may repeat
// bytes or values read from the target (a client could use the server to read what it cannot
// reach), replaced by `withheld`.
[[noreturn]] void rethrow_read_failure(const InputError& e, const std::string& field, const std::string& withheld,
                                       std::chrono::steady_clock::time_point start, std::chrono::milliseconds budget) {
  // A timed-out read may come back wrapped (a shard "cannot be read"); the clock says which it was
  // (curl's own limit, set to the time left in whole milliseconds, may fire a moment early).
  if (dynamic_cast<const RemoteTimeout*>(&e) || std::chrono::steady_clock::now() - start >= budget - std::chrono::milliseconds(20)) {
    throw RemoteTimeout(field, fmt::format("not read within {:.1f} s, parsing included", static_cast<double>(budget.count()) / 1000.0));
  }
  if (dynamic_cast<const RemoteError*>(&e)) throw InputError(field, message_of(e));
  throw InputError(field, withheld);
}

CheckpointInspection read_remote_source(const std::string& source) {
  require_remote(source, "source");
  (void)resolve_location(source, "source");  // the spec's own errors, before anything is read
  const std::chrono::milliseconds budget = remote_timeout();
  const auto start = std::chrono::steady_clock::now();
  RemoteDeadline deadline(budget);
  try {
    return inspect_checkpoint(source, "source");
  } catch (const InputError& e) {
    rethrow_read_failure(e, "source",
                         "was read, but its files are not a checkpoint vramcalc can use (malformed, unsupported, or not a model); "
                         "the details repeat the files' content, so the API withholds them: `vramcalc inspect SOURCE` prints them",
                         start, budget);
  }
}

// The text of a config.json a visitor pasted: parsed and mapped as a config file is, nothing read.
CheckpointInspection read_config_text(const std::string& text) {
  CheckpointInspection c;
  c.kind = "config.json";
  c.model = model_from_config(parse_config_text(text, "config"), "config");
  return c;
}

}  // namespace

void set_remote_timeout(std::chrono::milliseconds timeout) { g_remote_timeout_ms = timeout.count(); }
std::chrono::milliseconds remote_timeout() { return std::chrono::milliseconds(g_remote_timeout_ms.load()); }

CheckpointInspection read_caller_model(const RequestParams& p) {
  if (p.has("source") && p.has("config")) throw InputError("config", "give either source or config, not both");
  if (p.has("config")) return read_config_text(p.get("config"));
  const std::string source = p.get("source");
  if (source.empty()) throw InputError("source", "is required; give an http(s):// URL or hf:ORG/REPO[@REVISION][/FILE], or config (the text of a config.json)");
  return read_remote_source(source);
}

ExtrasInputs caller_extras(const RequestParams& p) {
  ExtrasInputs x;
  p.fill(x, ExtrasInputs::fields());
  if (p.has("lora")) x.loras = p.list("lora", "", kMaxLoraAdapters);
  if (p.has("engine-command")) x.fill_from_command(p.get("engine-command"));  // -mm, -md, --lora are checked below too
  x.take_speculative_draft();                                                 // speculative-config's "model", checked below too
  if (x.mmproj == "auto") {
    // A catalogue model's tower comes from its config; any other model's from its Hub repository.
    if (p.has("source") ? p.get("source").rfind("hf:", 0) != 0 : !Catalogue::builtin().find(p.get("model"))) {
      throw InputError("mmproj", "'auto' takes the tower of a catalogue model (model=) or the projector in the Hub repository of source=hf:ORG/REPO; "
                                 "otherwise name it: an http(s):// URL or hf:ORG/REPO[@REVISION]/FILE");
    }
  } else if (!x.mmproj.empty()) {
    require_remote(x.mmproj, "mmproj", ", or auto with source=hf:ORG/REPO");
  }
  if (!x.draft.empty() && !Catalogue::builtin().find(x.draft)) require_remote(x.draft, "draft", ", or a catalogue id (/api/models)");
  for (const auto& lora : x.loras) require_remote(lora, "lora");
  return x;
}

Extras load_caller_extras(const ExtrasInputs& extras, const std::string& model_spec, EngineRequest& request) {
  const std::chrono::milliseconds budget = remote_timeout();
  const auto start = std::chrono::steady_clock::now();
  RemoteDeadline deadline(budget);
  try {
    return load_extras(extras, model_spec, request);
  } catch (const InputError& e) {
    const std::string field = bare(e.subject());
    // Errors about the values the caller gave (images without mmproj, a draft's -ngld) are ours.
    if (field != "mmproj" && field != "draft" && field != "lora") throw;
    // auto for a catalogue model reads no file: the refusal is about the model, in our words.
    if (field == "mmproj" && extras.mmproj == "auto" && Catalogue::builtin().find(model_spec)) throw;
    rethrow_read_failure(e, field,
                         "could not be used: the file is missing, malformed, unsupported or not a " +
                             std::string(field == "mmproj" ? "projector GGUF" : field == "draft" ? "model" : "GGUF or safetensors adapter") +
                             "; the details may repeat the file's content, so the API withholds them: `vramcalc estimate` with the same --" + field + " prints them",
                         start, budget);
  }
}

void read_caller_command_adapters(std::optional<EngineRun>& command) {
  const std::chrono::milliseconds budget = remote_timeout();
  const auto start = std::chrono::steady_clock::now();
  RemoteDeadline deadline(budget);
  try {
    read_command_lora_adapters(command, AdapterReads::RemoteOnly);
  } catch (const InputError& e) {
    if (dynamic_cast<const RemoteTimeout*>(&e) || std::chrono::steady_clock::now() - start >= budget - std::chrono::milliseconds(20))
      throw RemoteTimeout("engine-command", fmt::format("the LoRA adapters (--lora-paths, --lora-modules) were not read within {:.1f} s", static_cast<double>(budget.count()) / 1000.0));
    throw InputError("engine-command", e.subject() + ": " + message_of(e));  // read_adapter_config's errors repeat nothing read
  }
}

bool reads_remote(std::string_view verb, const RequestParams& p) {
  if (verb == "inspect") return true;
  if ((verb == "estimate" || verb == "plan" || verb == "check") && p.has("engine-command")) {
    try {
      const EngineRun run = parse_engine_command(p.get("engine-command"));
      if (run.engine == EngineKind::Sglang && sglang_lora_reads_adapters(run.sglang.lora)) return true;
    } catch (const InputError&) {
      // refused by the verb itself
    }
  }
  if ((verb == "estimate" || verb == "sweep") && p.has("source")) return true;
  if (verb != "estimate") return false;
  ExtrasInputs x;
  p.fill(x, ExtrasInputs::fields());
  if (p.has("engine-command")) x.fill_from_command(p.get("engine-command"));
  try {
    x.take_speculative_draft();
  } catch (const InputError&) {
    // refused by the verb itself
  }
  const bool remote_mmproj = !x.mmproj.empty() && !(x.mmproj == "auto" && !p.has("source"));
  return remote_mmproj || (!x.draft.empty() && !Catalogue::builtin().find(x.draft)) || p.has("lora") || !x.loras.empty();
}

}  // namespace vc::server
