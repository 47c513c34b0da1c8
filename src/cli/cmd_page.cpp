// vramcalc page MODEL --format md|html: the model page written from the numbers.
#include <fmt/format.h>

#include "cli/commands.h"
#include "report/model_page.h"
#include "sources/resolver.h"

namespace vc::cli {

Command add_page(CLI::App& app) {
  auto* sub = app.add_subcommand("page", "A model page (at a glance, confirmed vs assumed, scale, build ladder, offload, verdict)");
  struct Opts {
    std::string model;
    std::string format = "md";
  };
  auto o = std::make_shared<Opts>();
  sub->add_option("MODEL", o->model, "Catalogue id or config.json")->required();
  sub->add_option("--format,-f", o->format, "md (Markdown) or html")->capture_default_str();
  return {sub, [o] {
            const PageFormat format = parse_page_format(o->format, "--format");
            Model model = resolve_model(o->model);
            fmt::print("{}", render_model_page(model, format));
            return 0;
          }};
}

}  // namespace vc::cli
