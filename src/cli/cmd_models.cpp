// vramcalc models: the built-in catalogue.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catalogue/catalogue.h"
#include "cli/commands.h"
#include "core/units.h"
#include "report/json_verbs.h"

namespace vc::cli {

Command add_models(CLI::App& app) {
  auto* sub = app.add_subcommand("models", "List the built-in catalogue");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print JSON");
  return {sub, [json] {
            const auto& models = Catalogue::builtin().models();
            if (*json) {
              fmt::print("{}\n", models_json(models).dump(2));
              return 0;
            }
            fmt::print("{:<28} {:<30} {:>8} {:>8} {:>7} {:>10} {:>12}  {}\n", "id", "name", "params", "active", "layers", "context", "native", "format");
            for (const auto& m : models) {
              fmt::print("{:<28} {:<30} {:>8} {:>8} {:>7} {:>10} {:>12}  {}\n", m.id, m.name, format_params(m.params.total()),
                         format_params(m.params.active()), m.layers.size(), format_tokens(m.max_context), format_bytes(m.native.bytes, ByteUnits::Decimal, 1),
                         m.native.format);
            }
            return 0;
          }};
}

}  // namespace vc::cli
