#pragma once
// A model page in the seed pages' shape, written from the numbers: at a glance (8K against the
// full context), what is confirmed and what is assumed, scale lines, the build ladder, offload
// arithmetic and the verdict. One document, rendered as Markdown or HTML; every figure comes
// from estimate(), build_ladder() and stream_estimate().
#include <string>
#include <vector>

#include "model/model.h"

namespace vc {

enum class PageFormat { Markdown, Html };
PageFormat parse_page_format(const std::string& text, const std::string& subject);

// The page's content, independent of the markup.
struct PageTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
struct PageSection {
  std::string title;
  std::vector<std::string> paragraphs;  // before the table
  PageTable table;                      // empty header: none
  std::vector<std::string> bullets;     // after the table
};
struct ModelPage {
  std::string model_id;  // for the link to the calculator set to this model
  std::string title;
  std::string lede;
  std::vector<PageSection> sections;
};

// The seeds' scenario for the glance table: native weights, one sequence, 16-bit cache, 15%.
inline constexpr uint64_t kGlanceContext = 8192;
// The seeds' read bandwidths for the offload arithmetic: an SSD and effective random reads of RAM.
inline constexpr uint64_t kSsdBytesPerSecond = 5'000'000'000;
inline constexpr uint64_t kRamBytesPerSecond = 19'000'000'000;

ModelPage build_model_page(const Model& model);
std::string render_markdown(const ModelPage& page);
std::string render_html(const ModelPage& page);
std::string render_model_page(const Model& model, PageFormat format);
// The answer to /models/ID for an id the catalogue lacks: says so and links every model's page.
std::string render_missing_model_html(const std::string& id, const std::vector<Model>& models);

}  // namespace vc
