// libFuzzer harness: the safetensors header reader and the tensor tally on arbitrary bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "memory_source.h"
#include "sources/safetensors/safetensors_file.h"
#include "sources/safetensors/safetensors_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vc::testing::MemorySource src(std::string(reinterpret_cast<const char*>(data), size), "fuzz.safetensors");
  try {
    vc::SafetensorsFile f = vc::read_safetensors(src);
    vc::tally_safetensors({f}, 4);
  } catch (const vc::InputError&) {
  } catch (const vc::OverflowError&) {
  }
  return 0;
}
