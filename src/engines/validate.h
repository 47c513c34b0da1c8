#pragma once
// `vramcalc validate DIR`: every reference case (llama.cpp runs on tiny GGUF models, engine logs
// from public threads) recomputed and compared with what the engine printed or measured.
#include <string>
#include <vector>

namespace vc {

struct ValidationRow {
  std::string case_id;
  std::string figure;      // "context_bytes", "kv_cache_tokens", ...
  double printed = 0;      // what the engine printed or measured
  double ours = 0;
  double error_percent = 0;
  double target_percent = 0;
  bool met = false;
  std::string note;        // why a case is skipped or missed
  std::string part;        // measured set or engine logs: "fitted" or "set-aside" (fixed before fitting); else empty
  bool computed = true;    // false: the case could not be computed; `note` says why
};

// `reference_dir` holds llamacpp/runs.json (+ gguf/) and engine-logs/cases.json.
std::vector<ValidationRow> validate_reference(const std::string& reference_dir);

// `measured_json` is tests/data/llamacpp-measured.json (tools/measure-llamacpp): per case the
// context bytes (target: exact), the compute buffer (3%), refusals, per model the CPU model
// buffer with repacked copies (1%); beside them node-llama-cpp's own estimator on the same runs
// (figures starting "peer:"). Every row says which part it belongs to.
std::vector<ValidationRow> validate_measured(const std::string& measured_json);

// Public engine logs in the repository's format (tests/data/engine-logs.json): each case carries
// its model (a catalogue id or the published config values), settings, the printed figures and
// its part ("fitted" or "set-aside"). vLLM: KV tokens from the printed KV memory, and the whole
// budget from the card (activation, non-KV total, KV tokens); SGLang: the token pool from the card.
// Cases that cannot be computed get one row with computed = false and the reason.
std::vector<ValidationRow> validate_engine_logs(const std::string& file);

}  // namespace vc
