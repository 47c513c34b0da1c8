#include "sources/gguf/gguf_header_outlook.h"

#include <algorithm>

namespace vc {
namespace {

// One tensor info: a name such as "blk.12.ffn_down_exps.weight" (~30 bytes) with its 8-byte
// length, 4 for the dimension count, 8 per dimension (3 for expert tensors), 4 for the type and 8
// for the offset: about 80; rounded up.
constexpr uint64_t kTensorInfoBytes = 96;
// Bytes per string item before any has been read (an 8-byte length and a short token).
constexpr uint64_t kFirstItemGuess = 16;
// Keys after the arrays (chat template, special token ids) and the alignment padding.
constexpr uint64_t kSlack = uint64_t{64} << 10;
// Counts, offsets and item sizes are capped at the header cap (256 MiB = 2^28 bytes), so no product
// below exceeds 2^60.
constexpr uint64_t kCountCap = uint64_t{1} << 28;

}  // namespace

uint64_t projected_header_end(uint64_t pos, uint64_t array_start, uint64_t done, uint64_t count, bool is_tokens, const GgufHeaderOutlook& o) {
  count = std::min(count, kCountCap);
  done = std::min(done, count);
  pos = std::min(pos, kCountCap);
  array_start = std::min(array_start, pos);
  const uint64_t per_item = std::min<uint64_t>(done && pos > array_start ? (pos - array_start) / done : kFirstItemGuess, kCountCap);
  uint64_t rest = (count - done) * per_item;
  if (is_tokens) {
    // i32 token types, one per token, and for SentencePiece vocabularies f32 scores too.
    rest += (o.bpe_tokenizer ? 4 : 8) * count;
    // BPE merges ("a b": two tokens and a space, each item with its length): Llama 3 ships 280,147
    // merges for 128,256 tokens, Qwen 151,387 for 151,936; two per token covers both.
    if (o.bpe_tokenizer && per_item > 8) rest += 2 * count * (2 * (per_item - 8) + 1 + 8);
  }
  rest += std::min(o.tensor_infos, kCountCap) * kTensorInfoBytes + kSlack;
  return pos + rest + rest / 8;  // an eighth more: a short guess costs a round trip
}

}  // namespace vc
