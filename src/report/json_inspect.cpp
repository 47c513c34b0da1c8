#include "report/json_inspect.h"

#include "report/json_report.h"

namespace vc {

nlohmann::json inspection_json(const CheckpointInspection& c) {
  nlohmann::json j;
  j["schema"] = "vramcalc.inspect/1";
  j["kind"] = c.kind;
  j["files"] = c.files;
  j["file_bytes"] = c.file_bytes;
  j["bytes_fetched"] = c.bytes_fetched;
  j["tensors"] = c.tally.tensors;
  j["tensor_bytes"] = c.tally.bytes;
  j["tensor_params"] = c.tally.params;
  nlohmann::json classes = nlohmann::json::object();
  for (const auto& [cls, n] : c.tally.params_by_class) classes[to_string(cls)] = {{"params", n}, {"bytes", c.tally.bytes_by_class.at(cls)}};
  j["by_class"] = classes;
  nlohmann::json dtypes = nlohmann::json::object();
  for (const auto& [name, d] : c.tally.by_dtype) dtypes[name] = {{"tensors", d.tensors}, {"bytes", d.bytes}, {"params", d.params}};
  j["by_dtype"] = dtypes;
  nlohmann::json meta = nlohmann::json::object();
  for (const auto& [k, v] : c.metadata) meta[k] = v;
  j["metadata"] = meta;
  if (c.model) j["model"] = model_summary_json(*c.model);
  else j["no_model"] = c.no_model;
  return j;
}

}  // namespace vc
