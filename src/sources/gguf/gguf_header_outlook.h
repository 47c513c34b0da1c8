#pragma once
// Where a GGUF header probably ends, judged from what it has declared so far, so that a remote read
// can fetch the rest in one range. GGUF does not state its header's length: the tokenizer's arrays
// (tokens, then scores and types, then BPE merges) and the tensor infos make up most of it, and
// each array's count comes before its bytes. The projection only sets how much a read asks for at
// once (BoundedReader::expect_end); no check of the parser depends on it.
#include <cstdint>

namespace vc {

struct GgufHeaderOutlook {
  uint64_t tensor_infos = 0;   // declared tensor count (their infos follow the metadata)
  bool bpe_tokenizer = false;  // tokenizer.ggml.model is "gpt2": a merges array follows the tokens
};

// A string array of `count` items began at `array_start`; its first `done` items end at `pos`.
// `is_tokens`: it is tokenizer.ggml.tokens, which the scores, types and (BPE) merges follow.
uint64_t projected_header_end(uint64_t pos, uint64_t array_start, uint64_t done, uint64_t count, bool is_tokens, const GgufHeaderOutlook& outlook);

}  // namespace vc
