// libFuzzer harness: the GGUF header reader and the GGUF -> Model mapper on arbitrary bytes.
// Any input must end in a Model or an InputError/OverflowError: never a crash, hang or
// unbounded allocation (ASan's allocation limit and -rss_limit_mb catch the last).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "memory_source.h"
#include "sources/gguf/gguf_file.h"
#include "sources/gguf/gguf_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vc::testing::MemorySource src(std::string(reinterpret_cast<const char*>(data), size), "fuzz.gguf");
  try {
    vc::GgufFile f = vc::read_gguf(src);
    vc::model_from_gguf({f});
  } catch (const vc::InputError&) {
  } catch (const vc::OverflowError&) {
  }
  return 0;
}
