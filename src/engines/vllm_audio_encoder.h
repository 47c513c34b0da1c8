#pragma once
// vLLM's profile run of an audio encoder (Qwen2-Audio's Whisper-style tower): the dummy batch is
// `items` clips of the feature extractor's chunk_length (30 s at 16 kHz, hop 160: 3,000 log-mel
// frames), each becoming (((3000 - 1) / 2 + 1) - 2) / 2 + 1 = 750 tokens; items as for images
// (vllm_encoder_items). The tower runs the padded 30 s input whole: conv1, conv2 (stride 2) to
// max_source_positions = 1,500 positions, then the Whisper encoder layers over them, an average
// pool (stride 2) and the projector into the text width.
// Sources: https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/qwen2_audio.py
// (Qwen2AudioProcessingInfo.get_mm_max_tokens_per_item, Qwen2AudioDummyInputsBuilder.get_dummy_mm_data,
// Qwen2AudioWhisperEncoder.forward), https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/whisper.py
// (WhisperEncoderLayer; WhisperMLP's fc1 is a ColumnParallelLinear, so the MLP is split over TP).
#include <cstdint>

#include "engines/vllm_encoder.h"
#include "model/model.h"

namespace vc {

// The profile of `audio` (Model::audio_encoder) in vLLM's dummy batch; a kind other than
// Qwen2-Audio returns items 0 with a note saying why.
VllmEncoderProfile vllm_audio_encoder_profile(const AudioEncoderSpec& audio, uint64_t max_num_batched_tokens, uint64_t max_num_seqs, uint64_t max_model_len,
                                              uint64_t tensor_parallel, uint64_t value_bytes, uint64_t limit_per_prompt = kVllmDefaultMmLimit);

}  // namespace vc
