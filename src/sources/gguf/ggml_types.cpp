#include "sources/gguf/ggml_types.h"

#include <map>
#include <nlohmann/json.hpp>

#include "catalogue/embedded_data.h"
#include "core/checked.h"
#include "core/error.h"

namespace vc {
namespace {

std::map<uint32_t, GgmlType> load() {
  std::map<uint32_t, GgmlType> out;
  auto doc = nlohmann::json::parse(embedded::file_text("ggml_types.json"));
  for (const auto& t : doc.at("types")) {
    GgmlType g;
    g.id = t.at("id").get<uint32_t>();
    g.name = t.at("name").get<std::string>();
    g.format = QuantTable::builtin().find_type(t.at("format").get<std::string>());
    if (!g.format) throw std::logic_error("ggml_types.json: " + g.name + " has no entry in quant_formats.json");
    out.emplace(g.id, g);
  }
  return out;
}

}  // namespace

const GgmlType* find_ggml_type(uint32_t id) {
  static const std::map<uint32_t, GgmlType> table = load();
  auto it = table.find(id);
  return it == table.end() ? nullptr : &it->second;
}

std::string gguf_file_type_name(uint64_t id) {
  static const std::map<uint64_t, std::string> table = [] {
    std::map<uint64_t, std::string> out;
    auto doc = nlohmann::json::parse(embedded::file_text("gguf_file_types.json"));
    for (const auto& t : doc.at("file_types")) out.emplace(t.at("id").get<uint64_t>(), t.at("name").get<std::string>());
    return out;
  }();
  auto it = table.find(id);
  return it == table.end() ? "" : it->second;
}

uint64_t ggml_tensor_bytes(const GgmlType& type, const uint64_t* ne, unsigned n_dims, const std::string& label) {
  const QuantFormat& f = *type.format;
  const uint64_t row = n_dims ? ne[0] : 1;
  if (row % f.block_elems != 0) {
    throw InputError(label, "rows of " + std::to_string(row) + " values are not a whole number of " + type.name + " blocks of " +
                                std::to_string(f.block_elems));
  }
  uint64_t bytes = checked_mul(row / f.block_elems, f.block_bytes);
  for (unsigned i = 1; i < n_dims; ++i) bytes = checked_mul(bytes, ne[i]);
  return bytes;
}

}  // namespace vc
