#include "engines/llamacpp_measured.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/checked.h"
#include "core/error.h"
#include "sources/gguf/ggml_types.h"
#include "sources/gguf/gguf_model.h"

namespace vc {
namespace {

// A stored metadata value: a bare integer (u32), string or bool, or {"f32": x}, {"i32": n},
// {"arr": "u32"|"i32"|"f32"|"str", "of": [...]} (tools/measure-llamacpp/gguf.mjs).
GgufValue gguf_value(const nlohmann::json& v, const std::string& where) {
  GgufValue g;
  if (v.is_number_unsigned()) {
    g.type = GgufType::U32;
    g.u = v.get<uint64_t>();
  } else if (v.is_string()) {
    g.type = GgufType::String;
    g.s = v.get<std::string>();
  } else if (v.is_boolean()) {
    g.type = GgufType::Bool;
    g.u = v.get<bool>() ? 1 : 0;
  } else if (v.is_object() && v.contains("f32")) {
    g.type = GgufType::F32;
    g.f = v["f32"].get<double>();
  } else if (v.is_object() && v.contains("i32")) {
    g.type = GgufType::I32;
    g.i = v["i32"].get<int64_t>();
  } else if (v.is_object() && v.contains("arr") && v.contains("of") && v["of"].is_array()) {
    g.type = GgufType::Array;
    const std::string elem = v["arr"].get<std::string>();
    for (const auto& x : v["of"]) {
      nlohmann::json item = elem == "u32" || elem == "str" ? x : nlohmann::json{{elem, x}};
      g.items.push_back(gguf_value(item, where));
    }
    g.count = g.items.size();
    g.elem_type = g.items.empty() ? GgufType::U32 : g.items.front().type;
  } else {
    throw InputError(where, "is not a metadata value this reader knows");
  }
  return g;
}

uint32_t ggml_type_id(const std::string& name, const std::string& where) {
  for (uint32_t id = 0; id < 64; ++id) {
    if (const GgmlType* t = find_ggml_type(id); t && t->name == name) return id;
  }
  throw InputError(where, "names ggml type '" + name + "', which this build does not know");
}

// The stored header as a GgufFile: tensors laid out as the writer lays them out (in order, each
// starting on a 32-byte boundary).
GgufFile rebuild_header(const nlohmann::json& m, const std::string& label) {
  GgufFile f;
  f.label = m.at("name").get<std::string>() + ".gguf";
  f.version = 3;
  for (const auto& [key, value] : m.at("metadata").items()) {
    f.metadata[key] = gguf_value(value, label + ": " + key);
    f.key_order.push_back(key);
  }
  uint64_t offset = 0;
  for (const auto& t : m.at("tensors")) {
    GgufTensor g;
    g.name = t.at(0).get<std::string>();
    g.ne = t.at(1).get<std::vector<uint64_t>>();
    g.type_id = ggml_type_id(t.at(2).get<std::string>(), label + ": " + g.name);
    const GgmlType* type = find_ggml_type(g.type_id);
    g.type_name = type->name;
    g.bytes = ggml_tensor_bytes(*type, g.ne.data(), static_cast<unsigned>(g.ne.size()), label + ": " + g.name);
    g.elements = 1;
    for (uint64_t n : g.ne) g.elements = checked_mul(g.elements, n);
    g.offset = offset;
    offset = checked_add(offset, ceil_div(g.bytes, 32) * 32);
    f.tensors.push_back(std::move(g));
  }
  f.file_size = m.value("file_bytes", uint64_t{0});
  return f;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const MeasuredLlamaCppModel* MeasuredLlamaCpp::find(const std::string& name) const {
  for (const auto& m : models) if (m.name == name) return &m;
  return nullptr;
}

MeasuredLlamaCpp read_llamacpp_measured(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open; expected the JSON written by tools/measure-llamacpp/measure.mjs");
  std::stringstream ss;
  ss << in.rdbuf();
  MeasuredLlamaCpp out;
  try {
    const auto j = nlohmann::json::parse(ss.str());
    const auto& l = j.at("llama_cpp");
    out.per_buffer = !j.at("models").empty() && j.at("models").front().is_string();
    if (out.per_buffer) {
      // A CUDA run of the same tiny models: their headers are in the CPU file beside this one.
      const std::string beside = (std::filesystem::path(path).parent_path() / "llamacpp-measured.json").string();
      MeasuredLlamaCpp cpu = read_llamacpp_measured(beside);
      if (cpu.per_buffer) throw InputError(beside, "holds no model metadata");
      for (const auto& name : j.at("models")) {
        const MeasuredLlamaCppModel* m = cpu.find(name.get<std::string>());
        if (!m) throw InputError(path, "names model '" + name.get<std::string>() + "', which " + beside + " does not hold");
        out.models.push_back(*m);
      }
      out.version = "commit " + l.at("commit").get<std::string>().substr(0, 8) + ", " + j.at("machine").value("gpu", std::string("GPU"));
    } else {
      out.version = l.at("version").get<std::string>() + " (commit " + l.at("commit").get<std::string>().substr(0, 8) + ")";
    }
    for (const auto& m : out.per_buffer ? nlohmann::json::array() : j.at("models")) {
      MeasuredLlamaCppModel mm;
      mm.name = m.at("name").get<std::string>();
      mm.set_aside = m.at("set_aside").get<bool>();
      mm.header = rebuild_header(m, path);
      mm.model = model_from_gguf({mm.header});
      const auto& b = m.at("model_buffers");
      mm.mapped_bytes = b.value("CPU_Mapped", uint64_t{0});
      mm.repack_bytes = b.value("CPU_REPACK", uint64_t{0});
      if (m.contains("node_llama_cpp_model_estimate") && m["node_llama_cpp_model_estimate"].is_number()) {
        mm.peer_estimate = m["node_llama_cpp_model_estimate"].get<uint64_t>();
      }
      out.models.push_back(std::move(mm));
    }
    for (const auto& c : j.at("cases")) {
      MeasuredLlamaCppCase k;
      k.id = c.at("id").get<std::string>();
      k.model = c.at("model").get<std::string>();
      k.set_aside = c.at("set_aside").get<bool>();
      const auto& s = c.at("settings");
      k.settings.n_ctx = s.at("c").get<uint64_t>();
      k.settings.n_seq = s.at("np").get<uint64_t>();
      k.settings.n_batch = s.at("b").get<uint64_t>();
      k.settings.n_ubatch = s.at("ub").get<uint64_t>();
      k.settings.flash_attn = s.at("fa").get<std::string>() != "off";
      k.settings.type_k = upper(s.at("ctk").get<std::string>());
      k.settings.type_v = upper(s.at("ctv").get<std::string>());
      k.settings.swa_full = s.at("swa_full").get<bool>();
      k.created = c.at("created").get<bool>();
      if (c.contains("errors")) k.errors = c["errors"].get<std::vector<std::string>>();
      if (out.per_buffer) {
        k.n_gpu_layers = s.at("ngl").get<uint64_t>();
        const std::string ot = s.value("ot", std::string("-"));
        if (ot != "-") k.override_tensor = ot.find('=') == std::string::npos ? ot + "=CPU" : ot;
      }
      if (k.created) {
        k.n_ctx = c.at("n_ctx").get<uint64_t>();
        k.n_ctx_seq = c.at("n_ctx_seq").get<uint64_t>();
        if (out.per_buffer) {
          for (const auto& [name, b] : c.at("buffers").items()) {
            LlamaCppBufferBytes& bytes = k.buffers[name];
            bytes.model = b.value("model", uint64_t{0});
            bytes.context = b.value("context", uint64_t{0});
            bytes.compute = b.value("compute", uint64_t{0});
            k.context_bytes = checked_add(k.context_bytes, bytes.context);
            k.compute_bytes = checked_add(k.compute_bytes, bytes.compute);
          }
        } else {
          k.context_bytes = c.at("context_bytes").get<uint64_t>();
          k.compute_bytes = c.at("compute_bytes").get<uint64_t>();
        }
      }
      if (c.contains("node_llama_cpp_estimate")) k.peer_estimate = c["node_llama_cpp_estimate"].get<uint64_t>();
      if (!out.find(k.model)) throw InputError(path, "case " + k.id + " names a model the file does not hold");
      out.cases.push_back(std::move(k));
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, std::string("not the measured llama.cpp format: ") + e.what());
  }
  return out;
}

}  // namespace vc
