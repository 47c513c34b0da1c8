#pragma once
// What a checkpoint stores that its config.json does not say: whether each MTP layer keeps its own
// embedding and output-head copies (model.layers.N.embed_tokens, shared_head.head), and whether a
// tied output head is saved again as lm_head.weight. The catalogue states them per entry with a
// source (facts.json `stored_tensors`); where unstated, each family's default applies.
#include <optional>
#include <string>

namespace vc {

struct StoredFact {
  bool value = false;
  std::string source;
};

struct StoredTensors {
  std::optional<StoredFact> mtp_embedding_and_head_copies;
  std::optional<StoredFact> tied_head_copy;
};

}  // namespace vc
