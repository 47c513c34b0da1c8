#pragma once
// What an API client names for the server to read: its own model (`source`, a remote checkpoint;
// `config`, the text of a config.json) and the files /api/estimate loads beside a model (`mmproj`,
// `draft`, `lora`). Hostile input: never a path on the server (only http(s):// URLs, hf: specs and,
// for `draft`, catalogue ids), every read under the request's fetch policy (FetchScope, set by the
// server) and one time budget, and errors that name the failure without repeating what was read.
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "engines/engine.h"
#include "estimate/extras_inputs.h"
#include "server/request_params.h"
#include "sources/checkpoint.h"

namespace vc::server {

// The time one request may spend on remote reads, parsing included (default 15 s; past it, 504).
void set_remote_timeout(std::chrono::milliseconds timeout);
std::chrono::milliseconds remote_timeout();

// The caller's own model: `config` parsed as a config.json, or `source` read remotely.
CheckpointInspection read_caller_model(const RequestParams& p);

// mmproj, images, draft and lora (a list, at most kMaxLoraAdapters), with what a pasted
// engine-command adds, checked before anything is read: InputError naming the parameter for a local
// path (or `mmproj=auto` without a source=hf:ORG/REPO to look in).
ExtrasInputs caller_extras(const RequestParams& p);

// load_extras under the guard: a failed read is 400 (504 past the budget) on its parameter, with the
// transfer's failure in our words or, for a file that was read but is unusable, no detail.
Extras load_caller_extras(const ExtrasInputs& extras, const std::string& model_spec, EngineRequest& request);

// SGLang's --lora-paths adapters in a pasted engine-command, read (their adapter_config.json, for
// the rank and target modules the command leaves to them) only from http(s):// or the Hub, under
// one time budget; a refusal names engine-command, with the flag in its message.
void read_caller_command_adapters(std::optional<EngineRun>& command);

// Whether a request to `verb` reads remote files (the server runs few of those at once).
bool reads_remote(std::string_view verb, const RequestParams& p);

}  // namespace vc::server
