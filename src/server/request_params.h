#pragma once
// The parameters of one API request, named like the CLI flags without "--" (quant, context,
// seqs, cache-dtype ...), read from a query string or a JSON object body. Hostile until checked:
// the number of parameters and the length of every name and value are bounded here.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/input_fields.h"

namespace vc::server {

inline constexpr std::size_t kMaxParams = 32;
inline constexpr std::size_t kMaxParamValueBytes = 1024;
// `config` (the text of a config.json a visitor pasted, sent in a POST body) is the one long value.
inline constexpr std::size_t kMaxConfigValueBytes = 60 * 1024;
// `log` (an engine's start-up log a visitor pasted, for /api/validate-log) is the other; both fit
// the server's 64 KiB body.
inline constexpr std::size_t kMaxLogValueBytes = 60 * 1024;
inline constexpr std::size_t kMaxParamNameBytes = 64;
// `engine-command` (a pasted engine command line) may be as long as the CLI takes one
// (kMaxEngineCommandBytes, engines/engine_run.h).

class RequestParams {
 public:
  // From decoded query pairs. A repeated name is an error (which one would win is a guess).
  static RequestParams from_pairs(const std::vector<std::pair<std::string, std::string>>& pairs);
  // From a JSON object body: values are strings, numbers, booleans or arrays of those (an
  // array becomes a comma-separated list, as the CLI's list flags take).
  static RequestParams from_json_body(std::string_view body);

  // Throws InputError(name, ...) for the first parameter the route does not accept.
  void check_known(const std::vector<std::string>& accepted) const;
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  // The value, or `fallback` when absent.
  std::string get(const std::string& name, const std::string& fallback = "") const;
  // A comma-separated list (a JSON array arrives as one), bounded before it is split.
  std::vector<std::string> list(const std::string& name, const std::string& fallback, std::size_t max_items) const;
  // Copies every given parameter named by `fields` into its member: the CLI's flags, as text.
  template <class Inputs>
  void fill(Inputs& inputs, const std::vector<InputField<Inputs>>& fields) const {
    for (const auto& f : fields) {
      if (has(f.name)) inputs.*(f.member) = get(f.name);
    }
  }

 private:
  void add(std::string name, std::string value);
  std::map<std::string, std::string> values_;
};

}  // namespace vc::server
