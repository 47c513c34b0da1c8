#include "estimate/extras_inputs.h"

#include "estimate/audio_tokens.h"
#include "estimate/qwen_image_tokens.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <sstream>

#include "core/checked.h"
#include "core/error.h"
#include "core/error_message.h"
#include "core/units.h"
#include "catalogue/catalogue.h"
#include "catalogue/catalogue_tower.h"
#include "estimate/checkpoint_tower.h"
#include "estimate/config_vision_tower.h"
#include "estimate/side_loads.h"
#include "estimate/vision_tower.h"
#include "engines/engine_run.h"
#include "engines/llamacpp_fit.h"
#include "engines/llamacpp_placement.h"
#include "engines/serving_speculative.h"
#include "sources/companion_files.h"
#include "sources/remote/http_source.h"
#include "sources/resolver.h"

namespace vc {
namespace {
constexpr uint64_t kMaxAudioSeconds = 36'000;  // ten hours a sequence: far past any model's context at 25 tokens a second
}  // namespace

const std::vector<InputField<ExtrasInputs>>& ExtrasInputs::fields() {
  using X = ExtrasInputs;
  static const std::vector<InputField<X>> table = {
      {"mmproj", &X::mmproj, "Vision/audio projector GGUF loaded beside the model, or 'auto' to find it in the same folder or Hub repository", "", false},
      {"images", &X::images, "Images per sequence: their tokens (from the projector) are added to the context", "", false},
      {"image-size", &X::image_size,
       "Image size in pixels, WIDTHxHEIGHT (1280x720) or one side, for towers that read images at any size (Qwen2.5-VL, Qwen3-VL, Qwen3.5 "
       "with --mmproj auto): the tokens one image adds, as the model's image processor resizes it", "", false},
      {"audio-seconds", &X::audio_seconds,
       "Seconds of audio per sequence, for a model with an audio encoder (Qwen2-Audio, Qwen2.5-Omni: 25 tokens a second, in clips of up to "
       "30 s; Qwen3-Omni: 13 a second, one clip): its tokens are added to the context", "", false},
      {"draft", &X::draft, "Draft model for speculative decoding (any MODEL form): its weights and cache are added", "", false},
      {"speculative-config", &X::speculative_config,
       "vLLM's speculative config as JSON, for --engine vllm or sglang: {\"model\": DRAFT, \"num_speculative_tokens\": N} (a draft model), "
       "{\"method\": \"eagle3\", \"model\": HEAD, ...} or {\"method\": \"mtp\"} (the model's own MTP layers); its model is read as --draft",
       "", false},
  };
  return table;
}

void ExtrasInputs::fill_from_command(const std::string& command) {
  std::istringstream in(command);
  std::vector<std::string> words;
  for (std::string w; in >> w && words.size() < 4096;) words.push_back(w);
  std::vector<std::string> from_command;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& f = words[i];
    if ((f == "-mm" || f == "--mmproj") && mmproj.empty()) mmproj = words[i + 1];
    if ((f == "-md" || f == "--model-draft") && draft.empty()) draft = words[i + 1];
    if (f == "--lora") from_command.push_back(words[i + 1]);
    if (f == "-ngld" || f == "--gpu-layers-draft" || f == "--n-gpu-layers-draft") draft_gpu_layers = words[i + 1];
    if (f == "-cd" || f == "--ctx-size-draft") draft_context = words[i + 1];
    if (f == "-ctkd" || f == "--cache-type-k-draft") draft_cache_type = words[i + 1];
    if (f == "-devd" || f == "--device-draft") draft_devices = words[i + 1];
    if (f == "-otd" || f == "--override-tensor-draft") draft_overrides = words[i + 1];
  }
  if (std::find(words.begin(), words.end(), "--no-mmproj-offload") != words.end()) mmproj_offload = false;
  if (loras.empty()) loras = from_command;
  // vLLM's and SGLang's draft, as the command parser reads them (quoted JSON included).
  if (draft.empty() && speculative_config.empty() && command.find("--speculative") != std::string::npos) {
    try {
      draft = parse_engine_command(command).serving_speculative.draft;
    } catch (const InputError&) {
      // The request's own parse of the same command refuses it, naming the flag.
    }
  }
}

void ExtrasInputs::take_speculative_draft() {
  if (speculative_config.empty()) return;
  const ServingSpeculative s = parse_vllm_speculative_config(speculative_config, "--speculative-config");
  if (draft.empty()) draft = s.draft;
}

namespace {

// A whole number from 0 to `max` given to `flag`; "" is `fallback`.
uint64_t count_flag(const std::string& value, const char* flag, uint64_t max, uint64_t fallback) {
  if (value.empty()) return fallback;
  try {
    size_t used = 0;
    const uint64_t n = std::stoull(value, &used);
    if (used == value.size() && n <= max && value.front() != '-') return n;
  } catch (const std::exception&) {
  }
  throw InputError(flag, fmt::format("'{}' is not a whole number from 0 to {}", value, format_count(max)));
}

// Runs one read for `flag` of the file `spec` names: an error about the file (whose subject is the
// location read) is rethrown, of the same kind, naming the flag and the spec as the user wrote it,
// so the CLI says which flag failed and the server which parameter.
template <class Read>
auto reading(const char* flag, const std::string& spec, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const InputError& e) {
    if (e.subject() == flag) throw;
    const std::string message = "'" + spec + "': " + message_of(e);
    if (dynamic_cast<const RemoteTimeout*>(&e)) throw RemoteTimeout(flag, message);
    if (dynamic_cast<const RemoteError*>(&e)) throw RemoteError(flag, message);
    throw InputError(flag, message);
  }
}

// `--mmproj auto` for a catalogue model: the tower counted from its config (InputError when it has
// none it can use). Any other model's projector is the GGUF in its Hub repository or folder.
TowerSpec catalogue_auto_tower(const Model& model) {
  if (auto spec = catalogue_tower(model)) return *spec;
  throw InputError("--mmproj", "'auto' for " + model.name + ": " +
                                   (model.params.by_class.count(ParamClass::Vision)
                                        ? "its vision tower is stated, not counted from a config.json vision_config, so its geometry is unknown; name its projector GGUF with --mmproj FILE"
                                        : "it has no vision tower (its config.json has no vision_config); auto needs a multimodal model such as gemma-3-27b"));
}

}  // namespace

Extras load_extras(const ExtrasInputs& flags, const std::string& model_spec, EngineRequest& request) {
  Scenario& sc = request.scenario;
  Companions& c = request.companions;
  Extras out;
  const uint64_t images = count_flag(flags.images, "--images", 10000, 0);
  if (images > 0 && flags.mmproj.empty()) throw InputError("--images", "needs the projector that turns images into tokens: add --mmproj FILE or --mmproj auto");
  std::optional<ImageSize> image_size;
  if (!flags.image_size.empty()) {
    image_size = parse_image_size(flags.image_size, "--image-size");
    if (flags.mmproj != "auto") throw InputError("--image-size", "sizes images for a tower read from the model's config: use it with --mmproj auto");
  }
  if (!flags.mmproj.empty()) {
    std::optional<TowerSpec> config_spec;  // auto for a catalogue model: the tower from its config (no file read)
    if (flags.mmproj == "auto" && Catalogue::builtin().find(model_spec)) {
      config_spec = catalogue_auto_tower(*request.model);
      c.tower = vision_tower_from_config(*config_spec, request.model->name, image_size);
    } else {
      c.tower = reading("--mmproj", flags.mmproj, [&] {
        if (flags.mmproj != "auto") return vision_tower_from_mmproj(read_gguf_header(flags.mmproj, "--mmproj"));
        return vision_tower_from_mmproj(read_gguf_header(find_mmproj_beside(model_spec, "--mmproj"), "--mmproj"));
      });
    }
    c.images = images;
    c.image_tokens = out.image_tokens = checked_mul(c.tower->image_tokens, images);
    c.mmproj_offload = flags.mmproj_offload;
    if (request.command && out.image_tokens > 0) {
      out.notes.push_back(fmt::format("the pasted command's context already holds the {} image tokens (they take part of it)", out.image_tokens));
    } else {
      sc.context = checked_add(sc.context, out.image_tokens);
    }
    // A checkpoint whose weights hold its own tower (the estimate's weights.vision line) loads it
    // once: the projector's weights are not added again.
    const bool in_weights = checkpoint_tower_line(*request.model, resolve_weights(*request.model, sc.quant)).has_value();
    for (auto& l : config_spec ? config_vision_tower_lines(*c.tower, *config_spec, images) : vision_tower_lines(*c.tower, images)) {
      if (in_weights && l.id == "vision.weights") {
        l.bytes = 0;
        l.assumption = "the checkpoint's weights already hold this tower (the weights.vision line): counted there, once";
      }
      out.lines.push_back(std::move(l));
    }
  }
  const uint64_t audio_seconds = count_flag(flags.audio_seconds, "--audio-seconds", kMaxAudioSeconds, 0);
  if (audio_seconds > 0) {
    const Model& m = *request.model;
    if (!m.audio_encoder)
      throw InputError("--audio-seconds", fmt::format("'{}' has no audio encoder counted from its config (audio_config, as Qwen2-Audio, Qwen2.5-Omni and Qwen3-Omni "
                                                      "have): audio adds no tokens to it", m.name));
    // Qwen3-Omni's AuT encoder (config_tower.cpp) counts its tokens its own way (audio_tokens.h).
    const bool aut = m.audio_encoder->kind == "Qwen3-Omni audio";
    const AudioTokens a = aut ? aut_audio_tokens(audio_seconds) : audio_tokens(audio_seconds);
    out.audio_tokens = a.tokens;
    if (request.command) {
      out.notes.push_back(fmt::format("the pasted command's context already holds the {} audio tokens (they take part of it)", out.audio_tokens));
    } else {
      sc.context = checked_add(sc.context, out.audio_tokens);
    }
    Line l;
    l.id = "audio.tokens";
    l.label = fmt::format("Audio tokens: {} s in {} clip{} (counted in the context)", format_count(audio_seconds), a.clips, a.clips == 1 ? "" : "s");
    l.bytes = 0;
    l.formula = a.formula;
    l.assumption = aut ? "whole seconds of 16 kHz audio, the whole recording as one clip (Qwen3-Omni's processor does not truncate); the audio bos/eos "
                         "markers are the prompt's text; the cache lines above include these tokens"
                       : "whole seconds of 16 kHz audio; a recording over 30 s given as 30 s clips (the feature extractor keeps the first 30 s of a clip); "
                         "the audio bos/eos markers around each clip are the prompt's text; the cache lines above include these tokens";
    l.source = aut ? "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen3_omni_moe/processing_qwen3_omni_moe.py "
                     "(WhisperFeatureExtractor with truncation False; _get_feat_extract_output_lengths)"
                   : "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen2_audio/processing_qwen2_audio.py and "
                     "https://github.com/huggingface/transformers/blob/main/src/transformers/models/qwen2_5_omni/processing_qwen2_5_omni.py (WhisperFeatureExtractor, "
                     "padding max_length; audio tokens from the feature attention mask)";
    out.lines.push_back(std::move(l));
  }
  // vLLM / SGLang speculative decoding: the flags' config, else the pasted command's; a --draft
  // alone is a draft model (vLLM draft_model, SGLang STANDALONE).
  const EngineKind engine = request.command ? request.command->engine : sc.engine;
  const bool serving = engine == EngineKind::Vllm || engine == EngineKind::Sglang;
  if (!flags.speculative_config.empty()) c.speculative = parse_vllm_speculative_config(flags.speculative_config, "--speculative-config");
  else if (request.command) c.speculative = request.command->serving_speculative;
  if (!c.speculative.on() && serving && !flags.draft.empty()) {
    c.speculative.method = "draft_model";
    c.speculative.source_flag = "--draft";
  }
  if (c.speculative.needs_draft() && flags.draft.empty())
    throw InputError(c.speculative.source_flag.empty() ? "--speculative-config" : c.speculative.source_flag, "method " + c.speculative.method + " needs a draft model");
  if (!flags.draft.empty() && c.speculative.on() && !c.speculative.needs_draft())
    throw InputError("--draft", "is not read by speculative method " + c.speculative.method + " (" +
                                    (c.speculative.method == "mtp" ? "it drafts with the model's own MTP layers" : "it drafts from the prompt") + ")");
  if (!flags.draft.empty()) {
    c.draft = std::make_shared<const Model>(reading("--draft", flags.draft, [&] { return resolve_model(flags.draft, "--draft"); }));
    if (!flags.draft_gpu_layers.empty()) c.draft_gpu_layers = count_flag(flags.draft_gpu_layers, "-ngld", 1u << 20, 0);
    c.draft_context = count_flag(flags.draft_context, "-cd", uint64_t{1} << 24, 0);
    if (!flags.draft_cache_type.empty()) c.draft_cache_type = flags.draft_cache_type;
    c.draft_devices = flags.draft_devices;
    if (!flags.draft_overrides.empty()) c.draft_overrides = parse_overrides(flags.draft_overrides, "-otd");
    std::vector<Line> lines = draft_lines(*c.draft, draft_scenario(sc, c.draft_context, c.draft_cache_type));
    if (serving) {
      // vLLM and SGLang split the draft over the target's TP and keep its cache in their pools:
      // the engine answer has both per GPU; here the whole draft's weights only.
      lines.resize(1);
      lines.front().assumption = "the whole draft as the engine loads it beside the target; per GPU (split over the target's TP) and its cache: the engine answer";
      lines.front().source = engine == EngineKind::Sglang ? kSglangSpecSource : kVllmSpecSource;
    }
    for (auto& l : lines) out.lines.push_back(std::move(l));
  }
  if (flags.loras.size() > kMaxLoraAdapters) throw InputError("--lora", fmt::format("names {} adapters; at most {} at once", flags.loras.size(), kMaxLoraAdapters));
  for (const auto& lora : flags.loras) {
    c.loras.push_back(reading("--lora", lora, [&] { return read_adapter(lora, "--lora"); }));
    out.lines.push_back(lora_line(c.loras.back()));
  }
  for (const auto& l : out.lines) out.bytes = checked_add(out.bytes, l.bytes);
  // llama.cpp's --fit measures the draft with the target (fit.cpp's "extra model"): replay it with the draft in.
  if (c.draft && request.command && request.command->engine == EngineKind::LlamaCpp) refit_llamacpp(*request.model, request);
  return out;
}

nlohmann::json components_json(const Extras& extras, uint64_t estimate_total) {
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : extras.lines) {
    lines.push_back({{"id", l.id}, {"label", l.label}, {"bytes", l.bytes}, {"formula", l.formula}, {"assumption", l.assumption}, {"source", l.source}});
  }
  return {{"lines", lines},
          {"bytes", extras.bytes},
          {"total_with_bytes", checked_add(estimate_total, extras.bytes)},
          {"image_tokens", extras.image_tokens},
          {"audio_tokens", extras.audio_tokens},
          {"notes", extras.notes}};
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

}  // namespace vc
