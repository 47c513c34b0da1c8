#pragma once
// The tiny GGUF models llama.cpp was measured on, written at test time from their headers as kept
// in tests/data/llamacpp/tiny_models.json: the same metadata, tensor names, shapes, types and
// offsets, hence the same file size; tensor data is zeros (memory depends on the header only).
// Also a folder laid out as `vramcalc validate DIR` reads it, from the measurements in tests/data/.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "gguf_writer.h"
#include "test_data.h"

namespace vc::testing {

inline const nlohmann::json& tiny_models() {
  static const nlohmann::json spec = read_test_json("llamacpp/tiny_models.json");
  return spec;
}

// The file names, in the order tiny_models.json lists them ("tiny-llama.gguf", ...).
inline std::vector<std::string> tiny_gguf_files() {
  std::vector<std::string> names;
  for (const auto& [name, model] : tiny_models().at("models").items()) names.push_back(name);
  return names;
}

namespace detail {

inline void add_metadata(GgufWriter& w, const nlohmann::json& entry) {
  const std::string key = entry.at(0), type = entry.at(1);
  const nlohmann::json& v = entry.at(2);
  if (type == "u32") w.u32(key, v.get<uint32_t>());
  else if (type == "u64") w.u64(key, v.get<uint64_t>());
  else if (type == "i32") w.i32(key, v.get<int32_t>());
  else if (type == "f32") w.f32(key, v.get<float>());
  else if (type == "bool") w.boolean(key, v.get<bool>());
  else if (type == "str") w.str(key, v.get<std::string>());
  else if (type == "u32[]") w.u32_array(key, v.get<std::vector<uint32_t>>());
  else if (type == "i32[]") w.i32_array(key, v.get<std::vector<int32_t>>());
  else if (type == "f32[]") w.f32_array(key, v.get<std::vector<float>>());
  else if (type == "str[]") w.str_array(key, v.get<std::vector<std::string>>());
  else throw std::runtime_error("tiny_models.json: metadata type " + type + " not handled");
}

inline uint32_t ggml_type_id(const std::string& name) {
  static const std::map<std::string, uint32_t> ids = {{"F32", GgufWriter::F32}, {"F16", GgufWriter::F16},
      {"Q4_0", GgufWriter::Q4_0}, {"Q8_0", GgufWriter::Q8_0}, {"MXFP4", GgufWriter::MXFP4}};
  auto it = ids.find(name);
  if (it == ids.end()) throw std::runtime_error("tiny_models.json: ggml type " + name + " not handled");
  return it->second;
}

}  // namespace detail

// Writes the model `file` ("tiny-llama.gguf") of tiny_models.json to `path`.
inline void write_tiny_gguf(const std::string& file, const std::filesystem::path& path) {
  const nlohmann::json& spec = tiny_models();
  const nlohmann::json& model = spec.at("models").at(file);
  GgufWriter w;
  for (const auto& entry : model.at("metadata")) {
    if (entry.is_string()) {  // "tokenizer": the block every tiny model shares
      for (const auto& t : spec.at("tokenizer")) detail::add_metadata(w, t);
    } else {
      detail::add_metadata(w, entry);
    }
  }
  for (const auto& t : model.at("tensors")) {
    w.tensor(t.at(0).get<std::string>(), t.at(1).get<std::vector<uint64_t>>(), detail::ggml_type_id(t.at(2)), t.at(3).get<uint64_t>());
  }
  w.write(path);
}

// A folder for this test process laid out as the measurements were made: llamacpp/gguf/*.gguf
// (every tiny model, written on first use), llamacpp/runs.json and engine-logs/cases.json (the
// records of tests/data/llamacpp/runs.json and the cases of tests/data/engine-logs.json).
inline const std::filesystem::path& engine_measurements_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path d = scratch_dir() / "engine-measurements";
    std::filesystem::create_directories(d / "llamacpp" / "gguf");
    std::filesystem::create_directories(d / "engine-logs");
    for (const auto& file : tiny_gguf_files()) write_tiny_gguf(file, d / "llamacpp" / "gguf" / file);
    std::ofstream(d / "llamacpp" / "runs.json") << read_test_json("llamacpp/runs.json").at("runs").dump();
    std::ofstream(d / "engine-logs" / "cases.json") << read_test_json("engine-logs.json").at("cases").dump();
    return d;
  }();
  return dir;
}

// The path of the tiny model `file` ("tiny-llama.gguf"), written on first use.
inline std::filesystem::path tiny_gguf(const std::string& file) {
  if (!tiny_models().at("models").contains(file)) throw std::runtime_error("tiny_models.json has no " + file);
  return engine_measurements_dir() / "llamacpp" / "gguf" / file;
}

}  // namespace vc::testing
