#include "sources/resolver.h"

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "sources/checkpoint.h"

namespace vc {

Model resolve_model(const std::string& spec, const std::string& subject) {
  if (spec.empty()) {
    throw InputError(subject, "is empty; give a catalogue id (see `vramcalc models`), a config.json, model folder, .safetensors or .gguf file, a URL or hf:ORG/REPO");
  }
  if (const Model* m = Catalogue::builtin().find(spec)) return *m;
  if (!looks_like_location(spec)) {
    throw InputError(subject, "'" + spec + "' is neither a catalogue model nor a file, folder, http(s):// URL or hf:ORG/REPO; catalogue: " + Catalogue::builtin().ids());
  }
  CheckpointInspection found = inspect_checkpoint(spec, subject);
  if (!found.model) throw InputError(subject, "'" + spec + "': " + found.no_model);
  return std::move(*found.model);
}

}  // namespace vc
