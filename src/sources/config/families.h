#pragma once
// One mapper per architecture family: each reads a config.json into the common Model structure
// (layers, params, native checkpoint). The table in config_mapper.cpp maps model_type -> mapper.
#include "sources/config/config_view.h"

namespace vc::families {

void map_kimi_linear(ConfigView& cfg);  // kimi_linear, kimi_k3: KDA + MLA (+ index keys) + MoE
void map_llama(ConfigView& cfg);        // llama, mistral, phi3, granite: GQA (+ Mistral window) + gated MLP
void map_gemma(ConfigView& cfg);        // gemma (Gemma 1): Llama's layout, the head tied by default
void map_cohere(ConfigView& cfg);       // cohere (Command R, Aya): parallel block, one bias-free LayerNorm, optional q/k norms, tied
void map_cohere2(ConfigView& cfg);      // cohere2 (Command R7B, Command A): Cohere's layers, sliding-window attention on 3 of every 4
void map_olmo2(ConfigView& cfg);        // olmo2: Llama's projections, post-norms, whole-projection q/k norms
void map_qwen2(ConfigView& cfg);        // qwen2, qwen2_moe: GQA with q/k/v biases, optional MoE
void map_qwen3(ConfigView& cfg);        // qwen3, qwen3_moe, qwen3_vl(_moe)_text: GQA with q/k norms, optional MoE
void map_qwen3_next(ConfigView& cfg);   // qwen3_next, qwen3_5(_moe): Gated DeltaNet + gated GQA + MoE
void map_deepseek(ConfigView& cfg);     // deepseek_v2, deepseek_v3, kimi_k2, deepseek_v32, glm_moe_dsa: MLA (+ indexer) + MoE
void map_gpt_oss(ConfigView& cfg);      // gpt_oss: alternating window/full GQA with sinks + MXFP4 experts
void map_gemma3(ConfigView& cfg);       // gemma3, gemma3_text: 5 local : 1 global
void map_gemma2(ConfigView& cfg);       // gemma2: local and global layers in turn
void map_phi(ConfigView& cfg);          // phi (Phi-1 / 1.5 / 2): parallel attention and MLP, biases, LayerNorms
void map_starcoder2(ConfigView& cfg);   // starcoder2: GQA with biases + non-gated c_fc / c_proj MLP, LayerNorms
void map_gpt_neox(ConfigView& cfg);     // gpt_neox (Pythia, GPT-NeoX-20B): MHA with fused qkv, non-gated MLP, biases, untied embed_out
void map_falcon(ConfigView& cfg);       // falcon: MQA (7B) or grouped KV (new_decoder_architecture: 40B, 180B), non-gated 4x MLP
void map_gpt2(ConfigView& cfg);         // gpt2: MHA, learned positions, non-gated MLP, biases, tied head
void map_gpt_bigcode(ConfigView& cfg);  // gpt_bigcode (SantaCoder, StarCoder): GPT-2's block with one KV head (multi_query)
void map_mixtral(ConfigView& cfg);      // mixtral: GQA + 8 experts
void map_llama4(ConfigView& cfg);       // llama4, llama4_text: chunked / NoPE full GQA + shared-expert MoE every k-th layer
void map_glm4_moe(ConfigView& cfg);     // glm4_moe: GQA with biases + shared-expert MoE
void map_minimax_m2(ConfigView& cfg);   // minimax_m2: GQA + 256 experts
void map_nemotron_h(ConfigView& cfg);   // nemotron_h: Mamba2 / attention / MLP / MoE by pattern
void map_jamba(ConfigView& cfg);        // jamba: Mamba1 + periodic attention + periodic MoE
void map_falcon_h1(ConfigView& cfg);    // falcon_h1: attention and Mamba2 in parallel on every layer
void map_granite_hybrid(ConfigView& cfg);  // granitemoehybrid: Mamba2 or NoPE attention by layer_types + shared-MLP MoE
void map_generic(ConfigView& cfg);      // fallback for unknown model_type, with warnings

}  // namespace vc::families
