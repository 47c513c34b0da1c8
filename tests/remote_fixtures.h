#pragma once
// Shared pieces of the remote-read tests: the small GGUF the loopback upstreams serve, and the
// tampering that checks a cache entry is verified before it is trusted.
#include <filesystem>
#include <fstream>

#include "gguf_writer.h"

namespace vc::testing {

// A small llama GGUF: 1 layer, hidden 64, 4 heads, 2 KV heads, a 100-token F16 vocabulary.
inline std::filesystem::path write_small_llama_gguf(const std::filesystem::path& dir) {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.u32("llama.block_count", 1);
  w.u32("llama.embedding_length", 64);
  w.u32("llama.attention.head_count", 4);
  w.u32("llama.attention.head_count_kv", 2);
  w.u32("llama.context_length", 4096);
  w.tensor("token_embd.weight", {64, 100}, GgufWriter::F16, 12800);
  w.tensor("blk.0.attn_q.weight", {64, 64}, GgufWriter::F16, 8192);
  w.tensor("blk.0.attn_k.weight", {64, 32}, GgufWriter::F16, 4096);
  w.tensor("blk.0.attn_v.weight", {64, 32}, GgufWriter::F16, 4096);
  w.tensor("blk.0.attn_output.weight", {64, 64}, GgufWriter::F16, 8192);
  std::filesystem::create_directories(dir);
  w.write(dir / "small.gguf");
  return dir / "small.gguf";
}

// Flips the last byte of a file in place (a cache entry edited behind the reader's back).
inline void flip_last_byte(const std::filesystem::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(-1, std::ios::end);
  char c = 0;
  f.get(c);
  f.seekp(-1, std::ios::end);
  f.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace vc::testing
