#pragma once
// A start-up log pasted by a user (vLLM, SGLang or llama.cpp): the settings it names and the
// figures it printed, read line by line. `vramcalc validate --log FILE` puts ours beside them.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engines/engine_run.h"
#include "engines/validate.h"
#include "model/model.h"

namespace vc {

struct EngineLog {
  std::string engine;                      // vllm, sglang, llamacpp
  std::string model;                       // as the log names it ("" when it does not)
  EngineRun run;                           // settings read from the log, in the profiles' terms
  std::map<std::string, double> printed;   // figure -> value (GiB, MiB or tokens as the key says)
  std::optional<uint64_t> card_bytes;      // vLLM: requested memory / utilization
  std::optional<uint64_t> free_before_weights;  // SGLang: "Load weight begin. avail mem"
  std::vector<std::string> notes;
};

// InputError naming what was expected when the text is not a log of a known engine.
EngineLog parse_engine_log(const std::string& text);

// The catalogue entry a name stands for: its id, or an engine's name for it (engine_aliases.json:
// the Hub repository a log prints); nullptr when it is neither.
const Model* log_catalogue_model(const std::string& name);

// The model a log names: a catalogue id or alias, else resolve_model's reading of the name.
Model log_model(const EngineLog& log, const std::string& model_override);

// Ours beside the printed figures (rows carry printed, ours and the error).
std::vector<ValidationRow> compare_engine_log(const EngineLog& log, const Model& model, std::optional<uint64_t> card_override);

}  // namespace vc
