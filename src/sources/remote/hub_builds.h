#pragma once
// A Hub repository's files sorted into what users load: GGUF builds (split sets grouped, one per
// quantization), the mmproj projector files beside them, and safetensors weights. Picks a build
// from a tag as llama.cpp's `-hf ORG/REPO:TAG` does: the Hub resolves the tag (llama.cpp asks
// {endpoint}/v2/ORG/REPO/manifests/TAG, common/download.cpp), matching it to the quantization in
// the file names without regard to case, and without a tag takes Q4_K_M
// (https://huggingface.co/docs/hub/en/gguf-llamacpp).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sources/remote/hub_repo.h"

namespace vc {

struct HubBuild {
  std::string tag;                 // "Q4_K_M", "UD-Q4_K_XL"; the file stem when no quantization is named
  std::vector<std::string> files;  // repository paths; split parts in order
  uint64_t bytes = 0;              // every part, exactly as listed
  uint32_t parts_expected = 1;     // NNNNN of -of-NNNNN
  bool complete() const { return files.size() == parts_expected; }
};

struct HubLayout {
  std::vector<HubBuild> builds;  // model GGUFs, smallest first
  std::vector<HubFile> mmproj;   // multimodal projector GGUFs ("mmproj" in the name)
  std::vector<HubFile> safetensors;
  bool has_index = false;   // model.safetensors.index.json
  bool has_config = false;  // config.json
};

HubLayout lay_out_hub_files(const std::vector<HubFile>& files);

// The quantization a GGUF file name states ("Qwen3-8B-UD-Q4_K_XL-00001-of-00002.gguf" ->
// "UD-Q4_K_XL"), upper-cased; "" when it states none.
std::string gguf_quant_tag(const std::string& file_name);

// The build `tag` names (empty: Q4_K_M, or the only build). InputError(subject) listing the tags
// there are when none or several match, or when a split set is missing parts.
const HubBuild& pick_hub_build(const HubLayout& layout, const std::string& tag, const std::string& subject);

// The projector to load beside a build: F16, then BF16, then F32, then Q8_0, then the first
// (mmproj files are usually published in those precisions); nullptr when there is none.
const HubFile* pick_mmproj(const HubLayout& layout);

// hf:ORG/REPO[@REV]:TAG -> the same spec naming the build's first file.
std::string hub_spec_for_build(const HubSpec& spec, const std::string& subject);

// What a repository root lists for `ext` (".gguf", ".safetensors") from the Hub API: a GGUF
// repository answers with the build llama.cpp would load without a tag.
std::function<std::vector<std::string>(const std::string&)> hub_lister(const HubSpec& spec, const std::string& subject);

}  // namespace vc
