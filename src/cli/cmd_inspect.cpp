// vramcalc inspect SOURCE: what a checkpoint holds, read from its headers: architecture,
// geometry, parameters by class, storage types, exact bytes, and the fields an estimate uses.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/units.h"
#include "report/json_inspect.h"
#include "sources/checkpoint.h"
#include "sources/remote/location.h"

namespace vc::cli {
namespace {

void print_text(const CheckpointInspection& c) {
  fmt::print("{} ({} file{}, {} B; {} B read)\n", c.kind, c.files.size(), c.files.size() == 1 ? "" : "s", format_count(c.file_bytes),
             format_count(c.bytes_fetched));
  for (const auto& f : c.files) fmt::print("  {}\n", f);
  if (c.model) {
    const Model& m = *c.model;
    fmt::print("\nModel: {}  architecture {}  ({} layers, hidden {}, vocab {}{})\n", m.name, m.architecture, m.layers.size(), m.hidden,
               m.vocab, m.tied_embeddings ? ", tied embeddings" : "");
    for (auto k : {AttentionKind::Full, AttentionKind::SlidingWindow, AttentionKind::Latent, AttentionKind::LinearState, AttentionKind::None}) {
      if (auto n = m.layer_count(k)) fmt::print("  {:<15} {} layers\n", to_string(k), n);
    }
    if (m.max_context) fmt::print("  context         {} tokens\n", format_count(m.max_context));
  } else {
    fmt::print("\nNo model geometry: {}\n", c.no_model);
  }
  if (c.tally.tensors) {
    fmt::print("\nTensors: {}  params {} ({})  exact bytes {} ({})\n", format_count(c.tally.tensors), format_count(c.tally.params),
               format_params(c.tally.params), format_count(c.tally.bytes), format_bytes(c.tally.bytes));
    fmt::print("\n  {:<16} {:>16} {:>18}\n", "class", "params", "bytes");
    for (const auto& [cls, n] : c.tally.params_by_class) {
      fmt::print("  {:<16} {:>16} {:>18}\n", to_string(cls), format_count(n), format_count(c.tally.bytes_by_class.at(cls)));
    }
    fmt::print("\n  {:<16} {:>8} {:>18}\n", "storage type", "tensors", "bytes");
    for (const auto& [name, d] : c.tally.by_dtype) fmt::print("  {:<16} {:>8} {:>18}\n", name, d.tensors, format_count(d.bytes));
  }
  if (c.model) {
    const Model& m = *c.model;
    fmt::print("\nWhat an estimate uses:\n");
    fmt::print("  weights         {} B ({}), {}{}\n", format_count(m.native.bytes), m.native.format, m.native.measured ? "measured: " : "derived: ",
               m.native.source);
    fmt::print("  params          {} total, {} active ({})\n", format_count(m.params.total()), format_count(m.params.active()), m.params.total_source());
    for (const auto& w : m.warnings) fmt::print("  warning         {}\n", w);
  }
}

}  // namespace

Command add_inspect(CLI::App& app) {
  auto* sub = app.add_subcommand("inspect", "What a checkpoint holds, from its headers: geometry, params by class, storage types, exact bytes");
  struct Opts {
    std::string source;
    std::string endpoint;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("SOURCE", o->source, "A .gguf or .safetensors file, model folder, config.json, http(s):// URL or hf:ORG/REPO[@REV][/FILE]")->required();
  sub->add_option("--hf-endpoint", o->endpoint, "Hub endpoint for hf: sources (default $VRAMCALC_HF_ENDPOINT or https://huggingface.co)");
  sub->add_flag("--json", o->json, "Print JSON");
  return {sub, [o] {
            if (!o->endpoint.empty()) set_hf_endpoint(o->endpoint);
            CheckpointInspection c = inspect_checkpoint(o->source, "SOURCE");
            if (o->json) fmt::print("{}\n", inspection_json(c).dump(2));
            else print_text(c);
            return 0;
          }};
}

}  // namespace vc::cli
