// Model pages: the seed pages' sections, written from the library's figures.
#include <gtest/gtest.h>

#include <algorithm>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "report/model_page.h"

namespace {

const vc::Model& k3() {
  const vc::Model* m = vc::Catalogue::builtin().find("kimi-k3");
  if (!m) throw std::runtime_error("kimi-k3 missing from the catalogue");
  return *m;
}

const vc::PageSection& section(const vc::ModelPage& p, const std::string& title) {
  for (const auto& s : p.sections) {
    if (s.title == title) return s;
  }
  throw std::runtime_error("no section " + title);
}

}  // namespace

// Seed 002's glance table for K3: weights 1,561 GB, resident ~1,796 GB at 8K and ~1,829 GB at 1M.
// By hand: 8K total 1,795,871,300,378 B (test_server_api.cpp); at 1M the cache is
// 24 x 1,152 B x 1,048,576 = 28,991,029,248 B, so the total is 1.15 x (1,560,936,091,448 +
// 28,991,029,248 + 464,633,856) = 1,828,950,706,227 B -> 1,829.0 GB.
TEST(ModelPage, GlanceTableMatchesSeed002) {
  auto page = vc::build_model_page(k3());
  const auto& g = section(page, "At a glance");
  ASSERT_EQ(g.table.rows.size(), 4u);
  EXPECT_EQ(g.table.header[1], "At 8K context");
  EXPECT_EQ(g.table.header[2], "At the full 1M context");
  EXPECT_EQ(g.table.rows[0][1], "1,560.9 GB");
  EXPECT_EQ(g.table.rows[3][1], "1,795.9 GB");
  EXPECT_EQ(g.table.rows[3][2], "1,829.0 GB");
}

// Seed 002: "Thirteen H200s at 141 GB each is 1,833 GB" (13 x 141 = 1,833 >= 1,829.0) and
// "On 24 GB consumer cards you are counting to 75" (ceil(1,829.0 / 24) = 77 with the 1M cache;
// the seed's 75 counts the weights alone, 1,561 / 24 = 65.04 -> 66 ... so we pin our own arithmetic:
// ceil(1,828.95 / 24) = 77, ceil(1,828.95 / 80) = 23).
TEST(ModelPage, ScaleLinesCountCards) {
  auto page = vc::build_model_page(k3());
  const auto& s = section(page, "Scale lines");
  ASSERT_GE(s.bullets.size(), 3u);
  EXPECT_EQ(s.bullets[0].rfind("13 H200s at 141 GB", 0), 0u) << s.bullets[0];
  EXPECT_EQ(s.bullets[1].rfind("23 cards of 80 GB (3 nodes of eight)", 0), 0u) << s.bullets[1];
  EXPECT_EQ(s.bullets[2].rfind("77 consumer cards of 24 GB", 0), 0u) << s.bullets[2];
}

// Seed 002's build ladder: UD-IQ1_S 594 GB -> about 683 GB with overhead, 6 x 128 GB unified;
// UD-Q4_K_XL 1,509 GB -> 1,735 GB, 14 x 128 GB or 13 x H200.
TEST(ModelPage, LadderRowsMatchSeed002) {
  auto page = vc::build_model_page(k3());
  const auto& l = section(page, "The build ladder");
  bool iq1 = false, q4 = false;
  for (const auto& r : l.table.rows) {
    if (r[0] == "UD-IQ1_S") {
      iq1 = true;
      EXPECT_EQ(r[3], "683.1 GB");
      EXPECT_EQ(r[4].rfind("6 × 128 GB unified", 0), 0u) << r[4];
    }
    if (r[0] == "UD-Q4_K_XL") {
      q4 = true;
      EXPECT_EQ(r[3], "1,735.3 GB");
      EXPECT_NE(r[4].find("14 × 128 GB unified"), std::string::npos) << r[4];
      EXPECT_NE(r[4].find("13 × 141 GB (H200)"), std::string::npos) << r[4];
    }
  }
  EXPECT_TRUE(iq1 && q4);
}

// Seed 002's offload arithmetic: "104B active parameters at about 1.7 bits per weight means one token
// reads roughly 22 GB, about 0.23 tok/s from an SSD at 5 GB/s and about 0.86 tok/s from RAM at
// 19 GB/s". That is the UD-IQ1_S build (the 1-bit class, not the smaller UD-Q1_0). Over the derived
// parameters: 594e9 B x 8 / 2,779,929,154,144 = 1.709 bits; 104,186,931,808 x 1.709 / 8 = 22.26 GB
// (printed 22.3 GB); 5 / 22.26 = 0.22 and 19 / 22.26 = 0.85 tok/s. The page's 0.23 / 0.86 divided
// by the vendor's rounded 2.8T and 104B (docs/accuracy.md; `stream kimi-k3 --bpw 1.7` reproduces it).
TEST(ModelPage, OffloadUsesTheSeedsOneBitClassBuild) {
  auto page = vc::build_model_page(k3());
  const auto& o = section(page, "Offload arithmetic");
  ASSERT_EQ(o.paragraphs.size(), 1u);
  EXPECT_NE(o.paragraphs[0].find("1.71 bits per weight (build UD-IQ1_S)"), std::string::npos) << o.paragraphs[0];
  EXPECT_NE(o.paragraphs[0].find("read 22.3 GB per token"), std::string::npos) << o.paragraphs[0];
  EXPECT_NE(o.paragraphs[0].find("0.22 tok/s"), std::string::npos) << o.paragraphs[0];
  EXPECT_NE(o.paragraphs[0].find("0.85 tok/s"), std::string::npos) << o.paragraphs[0];
}

// Every build of the ladder gets the same arithmetic, smallest first, then the native files.
// UD-Q1_0 (466 GB): 466e9 x 8 / 2,779,929,154,144 = 1.341 bits; 104.19e9 x 1.341 / 8 = 17.46 GB;
// 5 / 17.46 = 0.29, 19 / 17.46 = 1.09 tok/s.
TEST(ModelPage, OffloadTableCoversEveryBuild) {
  auto page = vc::build_model_page(k3());
  const auto& o = section(page, "Offload arithmetic");
  ASSERT_EQ(o.table.rows.size(), k3().builds.size() + 1);
  EXPECT_EQ(o.table.rows.front(), (std::vector<std::string>{"UD-Q1_0", "1.34", "17.5 GB", "0.29", "1.09"}));
  EXPECT_EQ(o.table.rows[3][0], "UD-IQ1_S");
  EXPECT_EQ(o.table.rows[3][2], "22.3 GB");  // one decimal above 10 GB, as the page prints
  EXPECT_EQ(o.table.rows.back()[0], "native MXFP4");
  // The native checkpoint is read per class: ~136.96 GB per token from the config's per-class
  // table (bf16 always-active parts plus 16 of 896 MXFP4 experts; test_plan_split.cpp), scaled by
  // the measured 1,560.94 GB over the table's 1,560.83 GB (the bf16 vision tower in it): 136.97 GB,
  // printed 137.0, so 5 / 137.0 = 0.04 and 19 / 137.0 = 0.14 tok/s. (Before the tower was counted
  // from vision_config, the stated one was missing from the table: 137.05, printed 137.1.)
  EXPECT_EQ(o.table.rows.back()[2], "137.0 GB");
  EXPECT_EQ(o.table.rows.back()[3], "0.04");
  EXPECT_EQ(o.table.rows.back()[4], "0.14");
}

// Without an IQ1_S build the smallest build is used: K3 with UD-IQ1_S removed reads UD-Q1_0 (1.34 bits, above).
TEST(ModelPage, OffloadFallsBackToTheSmallestBuild) {
  vc::Model m = k3();
  m.builds.erase(std::remove_if(m.builds.begin(), m.builds.end(), [](const vc::Build& b) { return b.name.find("IQ1_S") != std::string::npos; }),
                 m.builds.end());
  auto page = vc::build_model_page(m);
  const auto& o = section(page, "Offload arithmetic");
  EXPECT_NE(o.paragraphs[0].find("1.34 bits per weight (build UD-Q1_0)"), std::string::npos) << o.paragraphs[0];
}

TEST(ModelPage, ConfirmedAndAssumedComeFromTheEntry) {
  const vc::Model* pro = vc::Catalogue::builtin().find("kimi-k3.1-pro");
  ASSERT_NE(pro, nullptr);
  auto page = vc::build_model_page(*pro);
  const auto& c = section(page, "What is confirmed and what is assumed");
  EXPECT_EQ(c.table.rows.size(), pro->confirmed.size());
  EXPECT_EQ(c.bullets.size(), pro->assumed.size());
  EXPECT_EQ(c.bullets[0].rfind("Open: " + pro->assumed[0].question, 0), 0u);
}

TEST(ModelPage, RendersEscapedHtmlAndMarkdown) {
  vc::ModelPage p;
  p.title = "A <b> & 'c'";
  p.lede = "run `vramcalc x` now";
  vc::PageSection s;
  s.title = "T";
  s.table.header = {"a|b", "c"};
  s.table.rows = {{"<x>", "y|z"}};
  p.sections.push_back(s);
  std::string html = vc::render_html(p);
  EXPECT_NE(html.find("<h1>A &lt;b&gt; &amp; &#39;c&#39;</h1>"), std::string::npos);
  EXPECT_NE(html.find("run <code>vramcalc x</code> now"), std::string::npos);
  EXPECT_NE(html.find("<th scope=\"row\">&lt;x&gt;</th><td>y|z</td>"), std::string::npos);
  std::string md = vc::render_markdown(p);
  EXPECT_NE(md.find("| a\\|b | c |"), std::string::npos);
  EXPECT_NE(md.find("| <x> | y\\|z |"), std::string::npos);
  EXPECT_THROW(vc::parse_page_format("pdf", "--format"), vc::InputError);
}
