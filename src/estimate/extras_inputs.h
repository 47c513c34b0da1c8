#pragma once
// What users load beside a text model, as they type it (the CLI's --mmproj FILE|auto, --images N,
// --image-size WxH,
// --draft MODEL, --lora FILE (repeatable); /api/estimate's mmproj, images, draft, lora). A pasted
// llama.cpp command fills them from -mm/--mmproj, -md/--model-draft and --lora when they are not
// given, and sets --no-mmproj-offload, -ngld, -cd and -ctkd.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/input_fields.h"
#include "core/units.h"
#include "engines/engine.h"
#include "estimate/estimate.h"

namespace vc {

// At most this many LoRA adapters at once (--lora repeated, the API's lora list).
inline constexpr std::size_t kMaxLoraAdapters = 16;

struct ExtrasInputs {
  std::string mmproj;
  std::string images = "0";
  std::string image_size;  // WIDTHxHEIGHT for towers that read images at any size (Qwen-VL); empty: none
  std::string audio_seconds = "0";  // seconds of audio per sequence, for a model with an audio encoder
  std::string draft;
  // vLLM's --speculative-config JSON ({"model": ..., "method": ..., "num_speculative_tokens": N}):
  // the drafter vLLM and SGLang load (engines/serving_speculative.h); its "model" is the draft.
  std::string speculative_config;
  std::vector<std::string> loras;  // the CLI repeats --lora; the API's lora is a list
  // From a pasted llama.cpp command only (engines/companions.h says what they change).
  bool mmproj_offload = true;
  std::string draft_gpu_layers, draft_context, draft_cache_type;
  std::string draft_devices, draft_overrides;  // -devd (CUDA0,CUDA1 / none), -otd (as -ot)

  // mmproj, images and draft with names and help (lora, a list, is added by each face).
  static const std::vector<InputField<ExtrasInputs>>& fields();
  // Takes -mm/--mmproj, -md/--model-draft and --lora from a pasted command for flags left empty,
  // and the draft of vLLM's --speculative-config or SGLang's --speculative-draft-model-path.
  void fill_from_command(const std::string& command);
  // The draft named by speculative_config's "model" when draft is empty (InputError for bad JSON).
  // Each face calls it before it checks where the draft may be read from.
  void take_speculative_draft();
};

struct Extras {
  std::vector<Line> lines;
  uint64_t image_tokens = 0;  // added to the context per sequence
  uint64_t audio_tokens = 0;  // added to the context per sequence
  uint64_t bytes = 0;         // the lines' sum
  std::vector<std::string> notes;
};

// Reads the files the flags name, works out their lines and sets request.companions, so the engine
// places them per device. The request's context grows by the image and audio tokens, so the cache
// includes them; a pasted command's -c / --max-model-len is the window the engine allocates, so
// there the images and audio share it (a note says so). InputError naming the flag for bad input.
Extras load_extras(const ExtrasInputs& flags, const std::string& model_spec, EngineRequest& request);

// The lines as JSON ({"lines": [...], "bytes", "image_tokens", "audio_tokens", "total_with_bytes"}: the
// estimate's total with these) and as text with that total.
nlohmann::json components_json(const Extras& extras, uint64_t estimate_total);
std::string components_text(const Extras& extras, uint64_t estimate_total, bool explain, ByteUnits units);

}  // namespace vc
