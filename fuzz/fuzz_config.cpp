// libFuzzer harness: config.json text -> parse -> family mapper -> native checkpoint.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "sources/config/config_mapper.h"
#include "sources/config/config_view.h"
#include "sources/safetensors/safetensors_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (vc::json_depth(text) > 64) return 0;  // the resolver refuses such files before parsing
  try {
    vc::model_from_config(vc::parse_config_text(text, "fuzz/config.json"), "fuzz/config.json");
  } catch (const vc::InputError&) {
  } catch (const vc::OverflowError&) {
  }
  return 0;
}
