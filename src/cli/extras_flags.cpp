#include "cli/extras_flags.h"

#include <fmt/format.h>

#include <sstream>

#include "core/checked.h"
#include "core/error.h"
#include "core/units.h"
#include "estimate/side_loads.h"
#include "estimate/vision_tower.h"
#include "sources/companion_files.h"
#include "sources/resolver.h"

namespace vc::cli {

void ExtrasFlags::add_to(CLI::App& app) {
  app.add_option("--mmproj", mmproj, "Vision/audio projector GGUF loaded beside the model, or 'auto' to find it in the same folder or Hub repository");
  app.add_option("--images", images, "Images per sequence: their tokens (from the projector) are added to the context");
  app.add_option("--draft", draft, "Draft model for speculative decoding (any MODEL form): its weights and cache are added");
  app.add_option("--lora", loras, "LoRA adapter file (GGUF or safetensors); repeat for several");
}

void ExtrasFlags::fill_from_command(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> words;
  for (std::string w; in >> w && words.size() < 4096;) words.push_back(w);
  std::vector<std::string> from_command;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& f = words[i];
    if ((f == "-mm" || f == "--mmproj") && mmproj.empty()) mmproj = words[i + 1];
    if ((f == "-md" || f == "--model-draft") && draft.empty()) draft = words[i + 1];
    if (f == "--lora") from_command.push_back(words[i + 1]);
  }
  if (loras.empty()) loras = from_command;
}

Extras load_extras(const ExtrasFlags& flags, const std::string& model_spec, EngineRequest& request) {
  Scenario& sc = request.scenario;
  Extras out;
  uint64_t images = 0;
  try {
    size_t used = 0;
    images = std::stoull(flags.images, &used);
    if (used != flags.images.size() || images > 10000) throw std::invalid_argument("range");
  } catch (const std::exception&) {
    throw InputError("--images", "'" + flags.images + "' is not a whole number of images from 0 to 10,000");
  }
  if (images > 0 && flags.mmproj.empty()) throw InputError("--images", "needs the projector that turns images into tokens: add --mmproj FILE or --mmproj auto");
  if (!flags.mmproj.empty()) {
    const std::string file = flags.mmproj == "auto" ? find_mmproj_beside(model_spec, "--mmproj") : flags.mmproj;
    const VisionTower tower = vision_tower_from_mmproj(read_gguf_header(file, "--mmproj"));
    out.image_tokens = checked_mul(tower.image_tokens, images);
    if (request.command && out.image_tokens > 0) {
      out.notes.push_back(fmt::format("the pasted command's context already holds the {} image tokens (they take part of it)", out.image_tokens));
    } else {
      sc.context = checked_add(sc.context, out.image_tokens);
    }
    for (auto& l : vision_tower_lines(tower, images)) out.lines.push_back(std::move(l));
  }
  if (!flags.draft.empty()) {
    const Model draft = resolve_model(flags.draft, "--draft");
    for (auto& l : draft_lines(draft, sc)) out.lines.push_back(std::move(l));
  }
  for (const auto& lora : flags.loras) out.lines.push_back(lora_line(read_adapter(lora, "--lora")));
  for (const auto& l : out.lines) out.bytes = checked_add(out.bytes, l.bytes);
  return out;
}

nlohmann::json components_json(const Extras& extras) {
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : extras.lines) {
    lines.push_back({{"id", l.id}, {"label", l.label}, {"bytes", l.bytes}, {"formula", l.formula}, {"assumption", l.assumption}, {"source", l.source}});
  }
  return {{"lines", lines}, {"bytes", extras.bytes}, {"image_tokens", extras.image_tokens}, {"notes", extras.notes}};
}

std::string components_text(const Extras& extras, uint64_t estimate_total, bool explain, ByteUnits units) {
  std::string out = "\nLoaded beside the text model:\n";
  for (const auto& l : extras.lines) {
    out += fmt::format("  {:<70} {:>14}\n", l.label, l.bytes == 0 ? std::string("-") : format_bytes(l.bytes, units));
    if (explain || l.bytes == 0) out += fmt::format("      = {}{}{}\n", l.formula, l.assumption.empty() ? "" : "; ", l.assumption);
  }
  out += fmt::format("  {:<70} {:>14}\n", "Total with these", format_bytes(checked_add(estimate_total, extras.bytes), units));
  for (const auto& n : extras.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace vc::cli
