#pragma once
// Where llama.cpp puts each weight tensor: -ngl N offloads the output layer first, then the last
// N-1 repeating layers; the input embedding stays on the host; -ts splits the offloaded layers
// across GPUs by cumulative fractions; -ot REGEX=BUFT moves every tensor whose name matches
// (first match wins). Rules from llama_model::load_tensors (commit 34af94cd); docs/engines.md.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/model.h"

namespace vc {

// Which of a layer's tensors llama.cpp's --fit sends off the layer's device (common/fit.cpp,
// common_layer_fraction_t, named by what stays): Attention keeps the attention and moves every
// ffn_gate/ffn_up/ffn_down tensor; Up keeps ffn_up too; Gate moves only ffn_down; Moe moves the
// routed experts (ffn_{up,down,gate,gate_up}_{exps,chexps}).
enum class LlamaCppLayerFraction { Attention, Up, Gate, Moe };

// One layer --fit leaves partly on its device: what moves and where (0: CPU; 1 + k: CUDAk). Kept
// as structure, not as the -ot regexes fit.cpp writes, because the fit replays many placements.
struct LlamaCppLayerOverflow {
  uint64_t layer = 0;
  LlamaCppLayerFraction fraction = LlamaCppLayerFraction::Moe;
  std::size_t buffer = 0;
};

struct LlamaCppPlacementSettings {
  uint64_t n_gpu_layers = 0;                // -ngl (99 or more: everything)
  uint64_t devices = 1;                     // GPUs (CUDA0 ...); -ts gives one weight per device
  std::vector<double> tensor_split;         // -ts 3,1 (empty: even, see docs: llama.cpp uses free memory)
  std::vector<std::pair<std::string, std::string>> overrides;  // -ot REGEX=BUFT, in order
  uint64_t cpu_moe_layers = 0;  // --n-cpu-moe N as a count: routed experts of layers 0..N-1 on the CPU, no names or regex
  std::vector<LlamaCppLayerOverflow> fit_overflow;  // what llama.cpp's --fit moved (engines/llamacpp_fit.h); empty: nothing
  // How the host keeps the weights it runs (common/arg.cpp): the file memory-mapped (--mmap, the
  // default; --no-mmap reads it into a buffer), pinned with --mlock, and the 4-bit matrices copied
  // into CPU_REPACK's interleaved layout unless --no-repack (-nr).
  bool mmap = true;
  bool mlock = false;
  bool repack = true;
};

// A weight tensor left on the CPU backend, as CPU_REPACK reads it (llamacpp_cpu_weights.h): a GGUF
// tensor by its index in Model::tensors, or a synthesized one by llama.cpp's name for its share of a
// parameter class without "blk.N." ("attn.weight", "ffn_down_exps.weight", "output.weight").
struct HostTensor {
  uint64_t bytes = 0;
  std::optional<uint64_t> layer;          // the repeating layer it belongs to
  std::optional<std::size_t> gguf_index;  // Model::tensors[i]; empty for a synthesized tensor
  const char* part = "";                  // synthesized, or the output layer's copy of tied embeddings
};

struct LlamaCppPlacement {
  std::map<std::string, uint64_t> weights_by_buffer;  // "CPU", "CUDA0", ...: weight bytes
  std::vector<std::string> layer_device;              // per repeating layer
  std::string output_device;
  uint64_t overridden_tensors = 0;                    // tensors moved by -ot
  bool synthesized = false;                           // tensor names made up for a catalogue model
  std::vector<HostTensor> host_tensors;               // the weights on the CPU backend (CPU_REPACK reads them)
};

// `-ot` values ("exps=CPU,blk\.1\.=CUDA1") into pairs; InputError(flag: -ot, or -otd for the
// draft's) on a bad regex or form.
std::vector<std::pair<std::string, std::string>> parse_overrides(const std::string& value, const std::string& flag = "-ot");

// What --cpu-moe (`layers` empty: every layer) and --n-cpu-moe N (layers 0 .. N-1) add: one
// override per layer moving its routed expert tensors to the CPU, as llama.cpp's arg.cpp does.
std::vector<std::pair<std::string, std::string>> cpu_moe_overrides(std::optional<uint64_t> layers);

// --n-cpu-moe N into the settings. Kept as a count (no regex per layer: plan's offload search and
// the speed model read many placements) while no -ot came before it: arg.cpp appends its overrides
// in flag order and the first match wins, so a count that came first wins over any later -ot.
// After an -ot (or a second --n-cpu-moe) it is added as arg.cpp's per-layer overrides, in order.
void add_n_cpu_moe(LlamaCppPlacementSettings& s, uint64_t layers);

// Whether --n-cpu-moe's count moves this tensor of layer `layer` to the CPU (`id`: its name or part).
bool moved_by_n_cpu_moe(const LlamaCppPlacementSettings& s, std::optional<uint64_t> layer, std::string_view id);

// The buffer --fit's overflow sends this tensor of layer `layer` to (`id`: "blk.N.<name>" or the
// name alone), or none when it stays where its layer is.
std::optional<std::string> fit_overflow_buffer(const LlamaCppPlacementSettings& s, std::optional<uint64_t> layer, std::string_view id);

// llama.cpp's tensor names for one per-layer parameter class, without the "blk.N." prefix.
std::span<const char* const> llamacpp_tensor_names(ParamClass c);

// `weight_bytes`: the total to place when the model has no GGUF tensors (a catalogue entry at a
// quantization tier); its tensors are synthesized from the parameter classes in proportion.
LlamaCppPlacement llamacpp_placement(const Model& model, uint64_t weight_bytes, const LlamaCppPlacementSettings& settings);

}  // namespace vc
