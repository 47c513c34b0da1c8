// The tokens a dynamic-resolution Qwen vision tower makes of one image (src/estimate/qwen_image_tokens.cpp),
// and --image-size with --mmproj auto.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "core/error.h"
#include "estimate/qwen_image_tokens.h"

using namespace vc;
using json = nlohmann::json;

TEST(QwenImageTokens, ImageSizesParseAndBadOnesAreRefused) {
  const ImageSize wide = parse_image_size("1280x720", "--image-size");
  EXPECT_EQ(wide.width, 1280u);
  EXPECT_EQ(wide.height, 720u);
  const ImageSize square = parse_image_size("1024", "--image-size");
  EXPECT_EQ(square.width, 1024u);
  EXPECT_EQ(square.height, 1024u);
  for (const char* bad : {"", "0x720", "1280x", "x720", "wide", "-5", "70000x10", "1280x720x3", "1x300"}) {
    EXPECT_THROW(parse_image_size(bad, "--image-size"), InputError) << bad;
  }
}

// Worked by hand with smart_resize (transformers image_processing_qwen2_vl.py) and the published
// preprocessor_config.json bounds.
TEST(QwenImageTokens, Qwen25VlResizesToMultiplesOf28WithinItsPixelBounds) {
  const QwenImageProcessor p = qwen_image_processor("Qwen2.5-VL", 14, 2);  // factor 28; 3,136 to 12,845,056 px
  // 1280 x 720: round(45.71) = 46 -> 1,288; round(25.71) = 26 -> 728; 937,664 px within bounds: 46 x 26 = 1,196 tokens.
  const QwenImageTokens hd = qwen_image_tokens(p, {1280, 720});
  EXPECT_EQ(hd.resized_width, 1288u);
  EXPECT_EQ(hd.resized_height, 728u);
  EXPECT_EQ(hd.tokens, 1196u);
  EXPECT_EQ(hd.patches, 1196u * 4);  // 92 x 52 patches of 14 px, merged 2 x 2
  // 8000 x 6000 = 48 MP: rounded 8,008 x 5,992 is above max_pixels, so beta = sqrt(48,000,000 /
  // 12,845,056) = 1.93309; floor(8000 / beta / 28) = 147 -> 4,116, floor(6000 / beta / 28) = 110 -> 3,080.
  const QwenImageTokens big = qwen_image_tokens(p, {8000, 6000});
  EXPECT_EQ(big.resized_width, 4116u);
  EXPECT_EQ(big.resized_height, 3080u);
  EXPECT_EQ(big.tokens, 147u * 110u);
}

TEST(QwenImageTokens, Qwen3VlRoundsHalvesToEvenAndScalesSmallImagesUp) {
  const QwenImageProcessor p = qwen_image_processor("Qwen3-VL", 16, 2);  // factor 32; 65,536 to 16,777,216 px
  // 720 / 32 = 22.5: Python's round gives 22 (704 px); 1280 / 32 = 40: 22 x 40 = 880 tokens.
  const QwenImageTokens hd = qwen_image_tokens(p, {1280, 720});
  EXPECT_EQ(hd.resized_height, 704u);
  EXPECT_EQ(hd.tokens, 880u);
  // 20 x 20 = 400 px, below min_pixels: beta = sqrt(65,536 / 400) = 12.8, ceil(256 / 32) = 8 -> 256 px a side: 64 tokens.
  const QwenImageTokens tiny = qwen_image_tokens(p, {20, 20});
  EXPECT_EQ(tiny.resized_width, 256u);
  EXPECT_EQ(tiny.tokens, 64u);
}

TEST(QwenImageTokens, MmprojAutoCountsTheImagesAtTheSizeGiven) {
  const CliResult r = run_cli("estimate qwen3-vl-8b --json --mmproj auto --images 2 --image-size 1280x720");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json c = json::parse(r.output)["components"];
  EXPECT_EQ(c["image_tokens"], 2 * 880);
  for (const auto& l : c["lines"]) {
    if (l["id"] == "vision.tokens") {
      EXPECT_NE(l["source"].get<std::string>().find("image_processing_qwen2_vl.py"), std::string::npos);
      EXPECT_NE(l["formula"].get<std::string>().find("1280 x 720 px resized to 1280 x 704"), std::string::npos) << l["formula"];
    }
    // The encoder at (704 / 16) x (1280 / 16) = 3,520 positions, Qwen3-VL-8B's tower (hidden 1,152,
    // MLP 4,304, 16 heads): 3,520 x (5 x 1,152 + 4,304) x 4 B + 16 x 3,520^2 x 4 B = 934,686,720 B.
    if (l["id"] == "vision.compute") {
      EXPECT_EQ(l["bytes"], 934'686'720u);
    }
  }
  // A dynamic tower needs the size; a fixed one refuses it; the flag needs --mmproj auto.
  const CliResult missing = run_cli("estimate qwen3-vl-8b --mmproj auto --images 1");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("--image-size"), std::string::npos) << missing.output;
  EXPECT_EQ(run_cli("estimate gemma-3-4b --mmproj auto --image-size 1280x720").exit_code, 2);
  EXPECT_EQ(run_cli("estimate qwen3-vl-8b --image-size 1280x720").exit_code, 2);
  EXPECT_EQ(run_cli("estimate qwen3-vl-8b --mmproj auto --image-size 1x1000").exit_code, 2);
}
