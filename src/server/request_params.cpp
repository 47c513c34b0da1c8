#include "server/request_params.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/strict_json.h"
#include "engines/engine_run.h"

namespace vc::server {
namespace {

std::string scalar_text(const nlohmann::json& v, const std::string& name) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return v.dump();  // shortest round-trip form, e.g. 1.7
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  throw InputError(name, "must be a string, a number, a boolean or a list of those, not " + std::string(v.type_name()));
}

}  // namespace

void RequestParams::add(std::string name, std::string value) {
  if (name.empty() || name.size() > kMaxParamNameBytes) throw InputError("request", "a parameter name is empty or longer than 64 bytes");
  if (values_.size() >= kMaxParams) throw InputError("request", "has more than 32 parameters");
  const std::size_t limit = name == "config"           ? kMaxConfigValueBytes
                            : name == "log"            ? kMaxLogValueBytes
                            : name == "engine-command" ? kMaxEngineCommandBytes
                                                       : kMaxParamValueBytes;
  if (value.size() > limit) throw InputError(name, "is longer than " + std::to_string(limit) + " bytes");
  if (values_.count(name)) throw InputError(name, "is given more than once; give it once");
  values_.emplace(std::move(name), std::move(value));
}

RequestParams RequestParams::from_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  RequestParams p;
  for (const auto& [k, v] : pairs) p.add(k, v);
  return p;
}

RequestParams RequestParams::from_json_body(std::string_view body) {
  RequestParams p;
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return p;  // an empty body: no parameters
  StrictJson parsed = parse_strict_json(body);
  if (!parsed.duplicate_key.empty()) throw InputError(parsed.duplicate_key, "is given more than once; give it once");
  const nlohmann::json& doc = parsed.doc;
  if (doc.is_discarded()) throw InputError("body", "is not valid JSON; send an object such as {\"model\": \"kimi-k3\", \"context\": \"32K\"}");
  if (!doc.is_object()) throw InputError("body", "must be a JSON object of parameters, not " + std::string(doc.type_name()));
  for (const auto& [name, v] : doc.items()) {
    if (v.is_array()) {
      if (v.size() > 64) throw InputError(name, "lists more than 64 values");
      std::string joined;
      for (const auto& item : v) {
        if (item.is_array() || item.is_object()) throw InputError(name, "must be a flat list of strings or numbers");
        joined.append(joined.empty() ? "" : ",").append(scalar_text(item, name));
      }
      p.add(name, joined);
    } else {
      p.add(name, scalar_text(v, name));
    }
  }
  return p;
}

void RequestParams::check_known(const std::vector<std::string>& accepted) const {
  for (const auto& [name, value] : values_) {
    bool known = false;
    for (const auto& a : accepted) known = known || a == name;
    if (known) continue;
    std::string list;
    for (const auto& a : accepted) list.append(list.empty() ? "" : ", ").append(a);
    throw InputError(name, "is not a parameter of this route; accepted: " + (list.empty() ? std::string("none") : list));
  }
}

std::string RequestParams::get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::vector<std::string> RequestParams::list(const std::string& name, const std::string& fallback, std::size_t max_items) const {
  const std::string text = get(name, fallback);
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    if (out.size() > max_items) throw InputError(name, "lists more than " + std::to_string(max_items) + " values");
    start = end + 1;
  }
  return out;
}

}  // namespace vc::server
