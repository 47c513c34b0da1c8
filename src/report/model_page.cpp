#include "report/model_page.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "core/units.h"
#include "estimate/estimate.h"
#include "estimate/ladder.h"
#include "estimate/streaming.h"

namespace vc {
namespace {

std::string gb(uint64_t bytes) { return format_bytes(bytes, ByteUnits::Decimal, bytes < 10'000'000'000ull ? 2 : 1); }

const CardCount& cards_of(const Estimate& e, uint64_t card_bytes) {
  for (const auto& c : e.verdict.cards) {
    if (c.card_bytes == card_bytes) return c;
  }
  throw std::logic_error("verdict has no card size " + std::to_string(card_bytes));
}

PageSection glance(const Model& m, const Estimate& small, const Estimate& full) {
  PageSection s;
  s.title = "At a glance";
  s.paragraphs.push_back(fmt::format("Native weights, one sequence, a 16-bit cache and {} runtime overhead, at {} tokens and at the full {}-token context "
                                     "(`vramcalc estimate {} --context {}`).",
                                     format_percent_bp(full.scenario.overhead_bp), format_tokens(small.scenario.context),
                                     format_tokens(full.scenario.context), m.id, format_tokens(full.scenario.context)));
  s.table.header = {"Component", fmt::format("At {} context", format_tokens(small.scenario.context)),
                    fmt::format("At the full {} context", format_tokens(full.scenario.context))};
  s.table.rows = {
      {fmt::format("Weights, {}{}", small.weights.tier, m.native.measured ? " (measured)" : ""), gb(small.weights.bytes), gb(full.weights.bytes)},
      {"Cache and recurrent state", gb(small.context_bytes()), gb(full.context_bytes())},
      {fmt::format("Runtime overhead ({})", format_percent_bp(full.scenario.overhead_bp)), gb(small.overhead_bytes), gb(full.overhead_bytes)},
      {"Resident total", gb(small.total_bytes), gb(full.total_bytes)},
  };
  return s;
}

PageSection scale_lines(const Estimate& full) {
  PageSection s;
  s.title = "Scale lines";
  const auto& h200 = cards_of(full, 141'000'000'000ull);
  const auto& c80 = cards_of(full, 80'000'000'000ull);
  const auto& c24 = cards_of(full, 24'000'000'000ull);
  s.bullets.push_back(fmt::format("{} H200s at 141 GB hold the {} total at the full context, before sharding overhead.", h200.cards, gb(full.total_bytes)));
  s.bullets.push_back(fmt::format("{} cards of 80 GB ({} node{} of eight).", c80.cards, c80.nodes, c80.nodes == 1 ? "" : "s"));
  s.bullets.push_back(fmt::format("{} consumer cards of 24 GB.", c24.cards));
  s.bullets.push_back(fmt::format("The full context costs {} of cache and state on {} of weights: {} of the total.", gb(full.context_bytes()),
                                  gb(full.weights.bytes), format_percent_bp(full.verdict.context_share_bp)));
  return s;
}

PageSection confirmed_and_assumed(const Model& m) {
  PageSection s;
  s.title = "What is confirmed and what is assumed";
  s.table.header = {"Spec", "Value", "Whose word"};
  for (const auto& c : m.confirmed) s.table.rows.push_back({c.spec, c.value, c.whose_word});
  if (m.assumed.empty()) {
    s.bullets.push_back("Nothing in this entry is marked as assumed.");
  } else {
    for (const auto& a : m.assumed) s.bullets.push_back(fmt::format("Open: {}. {}", a.question, a.what_we_can_say));
  }
  return s;
}

PageSection ladder(const Model& m) {
  PageSection s;
  s.title = "The build ladder";
  auto rows = build_ladder(m, 1500);
  if (rows.empty()) {
    s.paragraphs.push_back("No quantized builds of this model are in the catalogue yet.");
    return s;
  }
  s.paragraphs.push_back(fmt::format("Each known build with 15% overhead and no cache: what box loads the file (`vramcalc builds {}`).", m.id));
  s.table.header = {"Build", "Size", "Bits per param", "With overhead", "What it needs"};
  for (const auto& r : rows) {
    std::string needs;
    for (const auto& op : r.options) needs += fmt::format("{}{} × {}", needs.empty() ? "" : ", ", op.cards, op.label);
    s.table.rows.push_back({r.build->name, gb(r.build->bytes), fmt::format("{:.2f}", r.bits_per_param), gb(r.with_overhead), needs});
  }
  return s;
}

// The build the offload paragraph reads: the smallest of the 1-bit class that llama.cpp users
// run (a name with "IQ1_S", as the published ~1.7-bit K3 build is UD-IQ1_S), else the smallest build; null
// without builds (the native files then).
const Build* offload_build(const Model& m) {
  const Build* smallest = nullptr;
  const Build* iq1s = nullptr;
  for (const auto& b : m.builds) {
    if (!smallest || b.bytes < smallest->bytes) smallest = &b;
    if (b.name.find("IQ1_S") != std::string::npos && (!iq1s || b.bytes < iq1s->bytes)) iq1s = &b;
  }
  return iq1s ? iq1s : smallest;
}

PageSection offload(const Model& m) {
  PageSection s;
  s.title = "Offload arithmetic";
  const Build* chosen = offload_build(m);
  auto streamed = [&m](const std::string& quant) {
    return std::make_pair(resolve_weights(m, quant), stream_for(m, quant, std::nullopt, {kSsdBytesPerSecond, kRamBytesPerSecond}));
  };
  const auto [w, st] = streamed(chosen ? chosen->name : "");
  s.paragraphs.push_back(fmt::format(
      "When the weights stream from a slower tier each token, every active weight is read once: {} active params at {:.2f} bits per weight "
      "({}) read {} per token. From an SSD at 5 GB/s that is {:.2f} tok/s; from system RAM at 19 GB/s of effective random reads, {:.2f} tok/s. "
      "This is arithmetic, not a measurement: a hot-expert cache in VRAM or RAM raises it (`vramcalc stream {}{}`). The table does the same arithmetic for every build.",
      format_params(st.active_params), st.bits_per_weight, w.tier, gb(st.bytes_per_token), st.rates[0].tokens_per_s, st.rates[1].tokens_per_s, m.id,
      chosen ? " --quant " + chosen->name : ""));
  // The same arithmetic for every build of the ladder, smallest first, and the native files.
  std::vector<const Build*> builds;
  for (const auto& b : m.builds) builds.push_back(&b);
  std::stable_sort(builds.begin(), builds.end(), [](const Build* a, const Build* b) { return a->bytes < b->bytes; });
  s.table.header = {"Weights", "Bits per weight", "Read per token", "tok/s from SSD (5 GB/s)", "tok/s from RAM (19 GB/s)"};
  auto row = [&s](const std::string& label, const StreamEstimate& e) {
    s.table.rows.push_back({label, fmt::format("{:.2f}", e.bits_per_weight), gb(e.bytes_per_token), fmt::format("{:.2f}", e.rates[0].tokens_per_s),
                            fmt::format("{:.2f}", e.rates[1].tokens_per_s)});
  };
  for (const Build* b : builds) row(b->name, streamed(b->name).second);
  row("native " + m.native.format, streamed("").second);
  return s;
}

std::string md_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// http(s) addresses become links (a source a reader can open); trailing punctuation stays text.
std::string html_linked(const std::string& text) {
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    std::size_t at = std::min(text.find("https://", pos), text.find("http://", pos));
    if (at == std::string::npos) break;
    std::size_t end = text.find_first_of(" \t\n\"'<>", at);
    if (end == std::string::npos) end = text.size();
    while (end > at && std::string_view(".,;:)").find(text[end - 1]) != std::string_view::npos) --end;
    const std::string url = text.substr(at, end - at);
    out += html_escape(text.substr(pos, at - pos)) + "<a href=\"" + html_escape(url) + "\">" + html_escape(url) + "</a>";
    pos = end;
  }
  return out + html_escape(text.substr(pos));
}

// Inline `code` spans become <code> in HTML; addresses outside them become links; the rest is escaped.
std::string html_text(const std::string& text) {
  std::string out;
  bool in_code = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '`') {
      out += in_code ? html_escape(text.substr(start, i - start)) : html_linked(text.substr(start, i - start));
      if (i < text.size()) {
        out += in_code ? "</code>" : "<code>";
        in_code = !in_code;
      }
      start = i + 1;
    }
  }
  if (in_code) out += "</code>";  // an unmatched backtick: close the span
  return out;
}

}  // namespace

PageFormat parse_page_format(const std::string& text, const std::string& subject) {
  if (text == "md" || text == "markdown") return PageFormat::Markdown;
  if (text == "html") return PageFormat::Html;
  throw InputError(subject, "'" + text + "' is not a page format; accepted: md, html");
}

ModelPage build_model_page(const Model& m) {
  Scenario base;  // the seeds' defaults: native, one sequence, f16 cache, f32 state, 15%
  Scenario at_small = base;
  at_small.context = std::min<uint64_t>(kGlanceContext, m.max_context ? m.max_context : kGlanceContext);
  Scenario at_full = base;
  at_full.context = m.max_context ? m.max_context : kGlanceContext;
  Estimate small = estimate(m, at_small);
  Estimate full = estimate(m, at_full);

  ModelPage page;
  page.model_id = m.id;
  page.title = fmt::format("How much memory does {} need?", m.name);
  const std::string download = m.native.copy_bytes
                                   ? fmt::format("; its download is {}, with a {} copy of the tied output head that engines load once", gb(m.native.download_bytes()),
                                                 gb(m.native.copy_bytes))
                                   : std::string();
  page.lede = fmt::format("{}: {} parameters, {} active per token, {} layers, up to {} tokens of context. The native checkpoint is {}, {} ({}{}). "
                          "About {} resident at {} and {} at the full {} context.",
                          m.name, m.params.total_text(), m.params.active_text(), m.layers.size(), format_count(m.max_context),
                          m.native.format, gb(m.native.bytes), m.native.measured ? "measured from the files" : "derived from the parameters", download,
                          gb(small.total_bytes), format_tokens(small.scenario.context), gb(full.total_bytes), format_tokens(full.scenario.context));
  page.sections.push_back(glance(m, small, full));
  page.sections.push_back(scale_lines(full));
  page.sections.push_back(confirmed_and_assumed(m));
  page.sections.push_back(ladder(m));
  page.sections.push_back(offload(m));
  PageSection verdict;
  verdict.title = "Verdict";
  verdict.paragraphs.push_back(full.verdict.text);
  if (!m.left_out.empty()) {
    std::string left;
    for (std::size_t i = 0; i < m.left_out.size(); ++i) left += (i ? (i + 1 == m.left_out.size() ? " and " : ", ") : "") + m.left_out[i];
    verdict.paragraphs.push_back("The estimate leaves out " + left + ".");
  }
  page.sections.push_back(verdict);
  if (!m.sources.empty()) {
    PageSection sources;
    sources.title = "Sources";
    sources.bullets = m.sources;
    page.sections.push_back(sources);
  }
  return page;
}

std::string render_markdown(const ModelPage& page) {
  std::string out = "# " + page.title + "\n\n" + page.lede + "\n";
  for (const auto& s : page.sections) {
    while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();  // one blank line between blocks
    out += "\n## " + s.title + "\n\n";
    for (const auto& p : s.paragraphs) out += p + "\n\n";
    if (!s.table.header.empty()) {
      auto row = [](const std::vector<std::string>& cells) {
        std::string r = "|";
        for (const auto& c : cells) r.append(" ").append(md_cell(c)).append(" |");
        return r + "\n";
      };
      out += row(s.table.header);
      out += row(std::vector<std::string>(s.table.header.size(), "---"));
      for (const auto& r : s.table.rows) out += row(r);
      out += "\n";
    }
    for (const auto& b : s.bullets) out += "- " + b + "\n";
    if (!s.bullets.empty()) out += "\n";
  }
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  return out;
}

std::string render_html(const ModelPage& page) {
  std::string out = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                    html_escape(page.title) + "</title>\n<link rel=\"stylesheet\" href=\"/style.css\">\n</head>\n<body>\n<main class=\"page\">\n"
                    "<p class=\"crumbs\"><a href=\"/\">vramcalc</a> · <a href=\"/?model=" + html_escape(page.model_id) + "\">Open the calculator set to this model</a></p>\n<h1>" + html_escape(page.title) + "</h1>\n<p class=\"lede\">" + html_text(page.lede) + "</p>\n";
  for (const auto& s : page.sections) {
    out += "<section>\n<h2>" + html_escape(s.title) + "</h2>\n";
    for (const auto& p : s.paragraphs) out += "<p>" + html_text(p) + "</p>\n";
    if (!s.table.header.empty()) {
      out += "<div class=\"scroll\"><table>\n<thead><tr>";
      for (const auto& h : s.table.header) out += "<th scope=\"col\">" + html_escape(h) + "</th>";
      out += "</tr></thead>\n<tbody>\n";
      for (const auto& r : s.table.rows) {
        out += "<tr>";
        for (std::size_t i = 0; i < r.size(); ++i) out += (i == 0 ? "<th scope=\"row\">" : "<td>") + html_escape(r[i]) + (i == 0 ? "</th>" : "</td>");
        out += "</tr>\n";
      }
      out += "</tbody>\n</table></div>\n";
    }
    if (!s.bullets.empty()) {
      out += "<ul>\n";
      for (const auto& b : s.bullets) out += "<li>" + html_text(b) + "</li>\n";
      out += "</ul>\n";
    }
    out += "</section>\n";
  }
  out += "</main>\n</body>\n</html>\n";
  return out;
}

std::string render_missing_model_html(const std::string& id, const std::vector<Model>& models) {
  std::string out = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>No such model: vramcalc</title>\n"
                    "<link rel=\"stylesheet\" href=\"/style.css\">\n</head>\n<body>\n<main class=\"page\">\n<p class=\"crumbs\"><a href=\"/\">vramcalc</a></p>\n"
                    "<h1>No model called \u201c" + html_escape(id) + "\u201d</h1>\n"
                    "<p>The catalogue has no entry with that id. Pick one of these, or open <a href=\"/\">the calculator</a>.</p>\n<ul class=\"model-list\">\n";
  for (const auto& m : models) out += "<li><a href=\"/models/" + html_escape(m.id) + "\">" + html_escape(m.name) + "</a> (" + html_escape(m.id) + ")</li>\n";
  return out + "</ul>\n</main>\n</body>\n</html>\n";
}

std::string render_model_page(const Model& model, PageFormat format) {
  ModelPage page = build_model_page(model);
  return format == PageFormat::Html ? render_html(page) : render_markdown(page);
}

}  // namespace vc
