#pragma once
// A tiny gemma3 vision projector (mmproj) GGUF for the tests that load one beside a model. Its
// tensors: patch_embd 14 x 14 x 3 x 64 F16 = 75,264 B; one q 64 x 64 F16 = 8,192 B; the projection
// 64 x 256 F16 = 32,768 B; 116,224 B in all. 896 px images of 14 px patches, merge 4: 256 tokens.
#include <filesystem>

#include "gguf_writer.h"

namespace vc::testing {

inline constexpr uint64_t kTinyMmprojBytes = 116'224;

inline void write_tiny_mmproj(const std::filesystem::path& file) {
  GgufWriter w;
  w.str("general.architecture", "clip");
  w.str("clip.projector_type", "gemma3");
  w.boolean("clip.has_vision_encoder", true);
  w.u32("clip.vision.image_size", 896);
  w.u32("clip.vision.patch_size", 14);
  w.u32("clip.vision.embedding_length", 64);
  w.u32("clip.vision.feed_forward_length", 128);
  w.u32("clip.vision.block_count", 1);
  w.u32("clip.vision.attention.head_count", 2);
  w.u32("clip.vision.projector.scale_factor", 4);
  w.tensor("v.patch_embd.weight", {14, 14, 3, 64}, GgufWriter::F16, 75264);
  w.tensor("v.blk.0.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.tensor("mm.input_projection.weight", {64, 256}, GgufWriter::F16, 32768);
  w.write(file);
}

}  // namespace vc::testing
