#include "report/engine_report.h"

#include <fmt/format.h>

namespace vc {
namespace {

nlohmann::json setting_value(const SettingValue& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

std::string engine_title(EngineKind k) {
  switch (k) {
    case EngineKind::Rule: return "the percentage rule";
    case EngineKind::LlamaCpp: return "llama.cpp";
    case EngineKind::Vllm: return "vLLM";
    case EngineKind::Sglang: return "SGLang";
  }
  return "the percentage rule";
}

}  // namespace

nlohmann::json engine_json(const EngineAnswer& a) {
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& s : a.settings) settings[s.name] = setting_value(s.value);
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : a.devices) {
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& l : d.lines) {
      lines.push_back({{"kind", to_string(l.kind)}, {"label", l.label}, {"bytes", l.bytes}, {"formula", l.formula}, {"assumption", l.assumption}, {"source", l.source}});
    }
    devices.push_back({{"name", d.name},
                       {"capacity_bytes", d.capacity ? nlohmann::json(*d.capacity) : nlohmann::json(nullptr)},
                       {"lines", lines},
                       {"total_bytes", d.total_bytes},
                       {"fits", d.fits ? nlohmann::json(*d.fits) : nlohmann::json(nullptr)}});
  }
  return {{"name", to_string(a.engine)},
          {"version_modelled", a.version_modelled},
          {"settings", settings},
          {"devices", devices},
          {"total_bytes", a.total_bytes},
          {"kv_tokens", a.kv_tokens ? nlohmann::json(*a.kv_tokens) : nlohmann::json(nullptr)},
          {"max_concurrency", a.max_concurrency ? nlohmann::json(*a.max_concurrency) : nlohmann::json(nullptr)},
          {"notes", a.notes}};
}

std::string engine_text(const EngineAnswer& a, bool explain, ByteUnits units) {
  std::string out = fmt::format("Engine: {} ({}; --engine rule|llamacpp|vllm|sglang)\n", to_string(a.engine), engine_title(a.engine));
  std::string settings;
  for (const auto& s : a.settings) {
    settings += fmt::format("{}{}={}", settings.empty() ? "" : ", ", s.name, std::visit([](const auto& x) { return fmt::format("{}", x); }, s.value));
  }
  out += fmt::format("  settings: {}\n", settings);
  for (const auto& d : a.devices) {
    out += fmt::format("  {}: {}{}{}\n", d.name, format_bytes(d.total_bytes, units), d.capacity ? " of " + format_bytes(*d.capacity, units) : "",
                       d.fits ? (*d.fits ? " (fits)" : " (does not fit)") : "");
    for (const auto& l : d.lines) {
      out += fmt::format("    {:<16} {:<58} {:>12}\n", to_string(l.kind), l.label, format_bytes(l.bytes, units));
      if (explain) out += fmt::format("        = {} B: {}{}{}; source: {}\n", format_count(l.bytes), l.formula, l.assumption.empty() ? "" : "; ", l.assumption, l.source);
    }
  }
  out += fmt::format("  total: {}", format_bytes(a.total_bytes, units));
  if (a.kv_tokens) out += fmt::format("; KV pool {} tokens", format_count(*a.kv_tokens));
  if (a.max_concurrency) out += fmt::format("; maximum concurrency {:.2f}x at the context", *a.max_concurrency);
  out += "\n";
  if (const auto fits = a.fits(); fits) {
    const DeviceAllocation* t = a.tightest();
    out += fmt::format("  {} with {}{}\n", *fits ? "Fits" : "Does not fit", to_string(a.engine),
                       t ? fmt::format(": the tightest device, {}, holds {} of {}", t->name, format_bytes(t->total_bytes, units), format_bytes(*t->capacity, units)) : "");
  }
  for (const auto& n : a.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace vc
