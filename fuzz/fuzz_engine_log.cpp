// libFuzzer harness: a pasted engine log (what /api/validate-log takes from anyone) -> the reader
// -> our figures beside the printed ones, for a catalogue model.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "engines/engine_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const vc::EngineLog log = vc::parse_engine_log(text);
    const vc::Model* model = vc::log_catalogue_model(log.model);
    if (!model) model = vc::Catalogue::builtin().find("llama-3.1-8b");
    vc::compare_engine_log(log, *model, std::optional<uint64_t>(80ull << 30));
  } catch (const vc::InputError&) {
  } catch (const vc::OverflowError&) {
  }
  return 0;
}
