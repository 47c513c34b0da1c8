// The whole built-in catalogue (data/models/): every entry derives its parameters from its
// published config without a guessed field, says where the config came from, rests on real
// sources, and either agrees with the vendor's stated total and active within 1% or records why
// not. Arithmetic uses the derived figure; the vendor's word is shown beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catalogue/catalogue.h"
#include "core/error.h"
#include "core/units.h"
#include "estimate/estimate.h"
#include "model/quant.h"
#include "plan/check.h"
#include "plan/engine_command.h"
#include "plan/box_inputs.h"

using namespace vc;

namespace {

const Model& model(const char* id) {
  const Model* m = Catalogue::builtin().find(id);
  if (!m) throw std::runtime_error(std::string("catalogue lacks ") + id);
  return *m;
}

double off_by(uint64_t derived, uint64_t stated) {
  return std::abs(static_cast<double>(derived) - static_cast<double>(stated)) / static_cast<double>(stated);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(CatalogueAudit, AtLeastSixtyEntries) { EXPECT_GE(Catalogue::builtin().models().size(), 60u); }

TEST(CatalogueAudit, DerivedAgreesWithStatedWithinOnePercentOrSaysWhy) {
  for (const auto& m : Catalogue::builtin().models()) {
    SCOPED_TRACE(m.id);
    const Params& p = m.params;
    ASSERT_GT(p.derived_total, 0u) << "every entry's total is derived from its geometry";
    ASSERT_GT(p.derived_active, 0u);
    EXPECT_LE(p.derived_active, p.derived_total);
    if (p.stated_total && off_by(p.derived_total, p.stated_total->value) > 0.01) {
      EXPECT_FALSE(p.difference_note.empty() && p.stated_convention.empty())
          << "derived " << p.derived_total << " vs stated " << p.stated_total->value << " needs stated.difference";
    }
    if (p.stated_active && off_by(p.derived_active, p.stated_active->value) > 0.01) {
      EXPECT_FALSE(p.difference_note.empty() && p.stated_convention.empty())
          << "derived active " << p.derived_active << " vs stated " << p.stated_active->value << " needs stated.convention or difference";
    }
    // The figure every estimate uses is the derived one.
    EXPECT_EQ(p.total(), p.derived_total);
    EXPECT_EQ(p.active(), p.derived_active);
    // Active is the sum of its parts, each class at most what is stored (a tied head is the
    // embedding matrix, read whole by decode).
    uint64_t parts = 0;
    for (const auto& [c, n] : p.active_by_class) parts += n;
    EXPECT_EQ(parts, p.derived_active);
    EXPECT_EQ(p.active_by_class.count(ParamClass::Embedding), 0u) << "the input embedding is a lookup, not active";
    EXPECT_EQ(p.active_by_class.count(ParamClass::Mtp), 0u);
  }
}

TEST(CatalogueAudit, EveryEntryHasSourcesProvenanceAndNoWarnings) {
  for (const auto& m : Catalogue::builtin().models()) {
    SCOPED_TRACE(m.id);
    EXPECT_TRUE(m.warnings.empty()) << "a catalogue entry needs a family mapper, not the generic fallback: "
                                    << (m.warnings.empty() ? "" : m.warnings[0]);
    ASSERT_FALSE(m.sources.empty());
    for (const auto& s : m.sources) EXPECT_EQ(s.rfind("https://", 0), 0u) << "sources a user sees are real documents: " << s;
    ASSERT_TRUE(m.provenance.count("config.json"));
    EXPECT_FALSE(m.provenance.at("config.json").empty());
    EXPECT_FALSE(m.license.empty());
    EXPECT_FALSE(m.left_out.empty()) << "left_out says what an estimate does not load";
    // No working-file words in user-facing text.
    for (const auto& text : {m.provenance.at("config.json"), m.native.source, m.license}) {
      EXPECT_FALSE(contains(text, "seed")) << text;
      EXPECT_FALSE(contains(text, "shared/reference")) << text;
    }
    for (const auto& b : m.builds) EXPECT_FALSE(contains(b.source, "seed")) << b.source;
    // Every citation names something a reader can open again: no search-index ids, no unnamed repositories.
    std::vector<std::string> cited{m.provenance.at("config.json"), m.native.source};
    for (const auto& b : m.builds) cited.push_back(b.source);
    for (const auto& text : cited) {
      for (const char* vague : {"not recorded", "search-index", "index id", "file id", "a public project"}) {
        EXPECT_FALSE(contains(text, vague)) << "cites something nobody can re-read (" << vague << "): " << text;
      }
    }
    if (!m.weights_available()) {
      EXPECT_FALSE(m.status_note.empty()) << "an unreleased entry says why";
    }
  }
}

TEST(CatalogueAudit, KimiK2UsesItsDerivedTotalWithTheVendorsBeside) {
  // Kimi K2: 61 layers, 384 experts of 3 x 7168 x 2048 (DeepSeek-V3 layout) -> 1.0264T derived
  // (test_families: 1,026.4B); the model card says "1 trillion".
  const Model& k2 = model("kimi-k2");
  EXPECT_NEAR(static_cast<double>(k2.params.total()), 1.0264e12, 0.0005e12);
  ASSERT_TRUE(k2.params.stated_total);
  EXPECT_EQ(k2.params.stated_total->value, 1'000'000'000'000u);
  EXPECT_EQ(k2.params.total_text(), "1.026T (vendor: 1T)");
  Scenario s;
  s.quant = "Q4_K_M";
  const Estimate e = estimate(k2, s);
  // Q4_K_M at 4.85 bits over 1.0264T = 622 GB, not the 606 GB the rounded 1T gave.
  EXPECT_NEAR(static_cast<double>(e.weights.bytes) / 1e9, 622.3, 0.5);
  EXPECT_TRUE(contains(e.lines[0].source, "the vendor states 1T")) << e.lines[0].source;
}

TEST(CatalogueAudit, Gemma3CountsItsTiedHeadAsActiveAndItsVisionTower) {
  const Model& g = model("gemma-3-27b");
  ASSERT_TRUE(g.tied_embeddings);
  // Tied head: 262,208 (Gemma3TextConfig's default vocab) x 5,376 = 1,409,630,208, read by every
  // decoded token, stored once.
  EXPECT_EQ(g.params.active_by_class.at(ParamClass::OutputHead), 1'409'630'208u);
  EXPECT_EQ(g.params.by_class.count(ParamClass::OutputHead), 0u);
  // SigLIP tower (27 x 15,239,504 + patch 678,528 + positions 4,718,592 + norm 2,304) plus the
  // projector (1,152 x 5,376 + 1,152), worked out by hand from vision_config: ~0.85 GB at bf16.
  EXPECT_EQ(g.params.by_class.at(ParamClass::Vision), 416'866'032u + 6'194'304u);
}

TEST(CatalogueAudit, MtpAndItsCopiesAreShipped) {
  // DeepSeek-V3: the MTP module carries its own embedding and head copies, 2 x 129,280 x 7,168.
  const Model& v3 = model("deepseek-v3");
  EXPECT_GT(v3.params.by_class.at(ParamClass::Mtp), 2ull * 129'280 * 7'168);
  // Hugging Face lists 685B for the checkpoint (671B + 14B MTP).
  EXPECT_NEAR(static_cast<double>(v3.params.derived_total) / 1e9, 685.0, 685.0 * 0.005);
  // Qwen3-Next ships one MTP layer (mtp.* tensors): about 1.65B parameters.
  EXPECT_NEAR(static_cast<double>(model("qwen3-next-80b-a3b").params.by_class.at(ParamClass::Mtp)) / 1e9, 1.65, 0.02);
}

TEST(CatalogueAudit, Bf16CheckpointIsSixteenBitsPerParameter) {
  // One consistent pair: derived bytes over derived parameters (no "15.93 bits" for BF16).
  for (const char* id : {"qwen3-next-80b-a3b", "glm-4.7", "kimi-linear-48b-a3b", "qwen3.5-397b-a17b", "gemma-3-27b"}) {
    const Model& m = model(id);
    ASSERT_EQ(m.native.format, "BF16") << id;
    ASSERT_FALSE(m.native.measured) << id;
    EXPECT_DOUBLE_EQ(resolve_weights(m, "").effective_bits, 16.0) << id;
  }
}

TEST(CatalogueAudit, AnnouncedWeightsGetNoCommandLineOrFit) {
  const Model& pro = model("kimi-k3.1-pro");
  EXPECT_EQ(pro.status, ReleaseStatus::Announced);
  EXPECT_FALSE(pro.weights_available());
  BoxInputs in;
  in.gpu = "H200x8";  // eight H200s: what vramcalc check --gpu H200x8 reads
  const Box box = in.to_box();
  const PlanOptions o = in.to_options();
  Scenario s;
  s.context = 32768;
  const CheckRow row = check_model(pro, box, o, s);
  EXPECT_EQ(row.fit, FitKind::Unavailable);
  EXPECT_TRUE(contains(row.note, "announced")) << row.note;
  const Plan p = make_plan(pro, s, box, o);
  EXPECT_FALSE(p.fits_on_devices);
  EXPECT_FALSE(p.aggregate_fits);
  EXPECT_TRUE(engine_commands(p).empty());
  EXPECT_TRUE(contains(p.verdict, "No fit verdict")) << p.verdict;
  // A released model on the same box still gets its command lines.
  EXPECT_FALSE(engine_commands(make_plan(model("kimi-k3"), s, box, o)).empty());
}

TEST(CatalogueAudit, Gemma3LanguageModelsMatchKerasHubCounts) {
  // Keras Hub's gemma3 presets (keras-team/keras-hub gemma3_presets.py) publish exact parameter
  // counts over a 262,144-row vocabulary: 1B 999,885,952; 4B text 3,880,099,328; 12B text
  // 11,765,788,416. The 1B checkpoint has the same vocabulary; the 4B and 12B embeddings carry
  // 262,208 rows (64 more x hidden), and their SigLIP tower is counted on top as vision.
  auto language = [](const Model& m) {
    auto v = m.params.by_class.find(ParamClass::Vision);
    return m.params.derived_total - (v == m.params.by_class.end() ? 0 : v->second);
  };
  EXPECT_EQ(language(model("gemma-3-1b")), 999'885'952u);
  EXPECT_EQ(language(model("gemma-3-4b")), 3'880'099'328u + 64u * 2560);
  EXPECT_EQ(language(model("gemma-3-12b")), 11'765'788'416u + 64u * 3840);
  // SigLIP tower (the 27B's test: 416,866,032) plus a projector 1152 x hidden + 1152.
  EXPECT_EQ(model("gemma-3-4b").params.by_class.at(ParamClass::Vision), 416'866'032u + 1152u * 2560 + 1152);
}

TEST(CatalogueAudit, MistralSmallCountsItsPixtralEncoder) {
  // vision_config by hand: 24 blocks x (4 x 1024^2 + 3 x 1024 x 4096 + 2 x 1024) = 402,702,336,
  // patch convolution 3 x 14^2 x 1024 = 602,112, pre-norm 1024; projector norm 1024 + merger
  // 4096 x 1024 + 1024 x 5120 + 5120 x 5120 = 35,652,608. The language model: 40 layers x
  // (5120 x 4096 x 2 + 5120 x 1024 x 2 + 3 x 5120 x 32768 + 2 x 5120) + 2 x 131072 x 5120 + 5120
  // = 23,572,403,200; Mistral's "24 billion parameters" is the sum, rounded.
  const Model& m = model("mistral-small-3.1-24b");
  EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), 402'702'336u + 602'112 + 1024 + 35'652'608);
  EXPECT_EQ(m.params.derived_total, 23'572'403'200u + 438'958'080u);
  EXPECT_EQ(m.inputs.size(), 2u);
}

TEST(CatalogueAudit, Llama4CountsTextModelTowerAndActiveByHand) {
  // Text models by hand in test_families.cpp (Llama4ScoutChunkedAttentionAndSharedExperts): Scout
  // 107,769,861,120, Maverick 400,711,848,960; the vision tower 871,932,416 (test_config_tower.cpp).
  // Maverick's sum, 401,583,781,376, is also the Hub's count of meta-llama/Llama-4-Maverick-17B-128E-
  // Instruct (tests/data/hub-parameter-counts.json). Active by hand, per token: attention 62,914,560 +
  // norms 10,240 a layer; Scout 48 x (that + one expert and the shared one 2 x 125,829,120 + router
  // 81,920) = 15,103,918,080; Maverick 24 MoE layers x (that + 251,658,240 + router 655,360) =
  // 7,565,721,600 and 24 dense x (that + 3 x 5120 x 16384) = 7,549,992,960; each plus the untied head
  // 202,048 x 5120 = 1,034,485,760 and the final norm 5,120. Meta's card: 17B activated, 109B / 400B.
  const Model& scout = model("llama-4-scout");
  EXPECT_EQ(scout.params.by_class.at(ParamClass::Vision), 871'932'416u);
  EXPECT_EQ(scout.params.derived_total, 107'769'861'120u + 871'932'416u);
  EXPECT_EQ(scout.params.derived_active, 15'103'918'080u + 1'034'485'760u + 5'120u);
  EXPECT_EQ(scout.inputs.size(), 2u);
  const Model& maverick = model("llama-4-maverick");
  EXPECT_EQ(maverick.params.derived_total, 401'583'781'376u);
  EXPECT_EQ(maverick.params.derived_active, 7'565'721'600u + 7'549'992'960u + 1'034'485'760u + 5'120u);
  // Both keep keys for the whole context only in the 12 NoPE layers; 36 attend within 8,192 tokens.
  for (const Model* m : {&scout, &maverick}) {
    EXPECT_EQ(m->layer_count(AttentionKind::Full), 12u);
    EXPECT_EQ(m->layer_count(AttentionKind::SlidingWindow), 36u);
  }
}

TEST(CatalogueAudit, Qwen3VlCountsItsVisionTowerToThePublishedByte) {
  // Qwen3-VL-8B-Instruct's BF16 model.safetensors.index.json states total_size 17,534,247,392
  // bytes (two independent public copies). Language model 8,190,735,360 (Qwen3-8B's geometry) plus
  // the vision tower from vision_config by hand: patch 3 x 2 x 16^2 x 1152 + 1152 = 1,770,624,
  // positions 2304 x 1152 = 2,654,208, 27 blocks x 15,239,504, merger 2304 + 4608^2 + 4608 +
  // 4608 x 4096 + 4096 = 40,119,040, and 3 DeepStack mergers of 40,125,952: 576,388,336 in all.
  const Model& m = model("qwen3-vl-8b");
  EXPECT_EQ(m.params.by_class.at(ParamClass::Vision), 576'388'336u);
  EXPECT_EQ(m.params.derived_total, 8'190'735'360u + 576'388'336u);
  EXPECT_EQ(m.native.bytes, 17'534'247'392u);
}

TEST(CatalogueAudit, Qwen3VlSmallSizesTieTheirHeadAndCountTheNarrowTower) {
  // Qwen3-VL-4B and -2B share one 1024-wide tower (vision_config: 24 blocks, MLP 4096, output
  // width the language model's). By hand: patch 3 x 2 x 16^2 x 1024 + 1024 = 1,573,888,
  // positions 2304 x 1024 = 2,359,296, 24 blocks x (4 x 1024 norms + 1024 x 3072 + 3072 +
  // 1024^2 + 1024 + 1024 x 4096 + 4096 + 4096 x 1024 + 1024 = 12,596,224) = 302,309,376, then
  // the merger 2 x 1024 + 4096^2 + 4096 + 4096 x out + out and 3 DeepStack mergers of
  // 2 x 4096 + 4096^2 + 4096 + 4096 x out + out. For the 4B (out 2560): 27,271,680 and
  // 3 x 27,277,824, 415,347,712 in all; for the 2B (out 2048): 25,174,016 and 3 x 25,180,160,
  // 406,957,056. Language models with one tied matrix: 4B 151,936 x 2560 + 36 x 100,930,816 +
  // 2560 = 4,022,468,096; 2B 151,936 x 2048 + 28 x 50,336,000 + 2048 = 1,720,574,976. The sums,
  // 4,437,815,808 and 2,127,532,032, are the Hub's counts of the two checkpoints
  // (tests/data/hub-parameter-counts.json); an untied head would add 388,956,160 and 311,164,928.
  const Model& b4 = model("qwen3-vl-4b");
  const Model& b2 = model("qwen3-vl-2b");
  ASSERT_TRUE(b4.tied_embeddings);
  ASSERT_TRUE(b2.tied_embeddings);
  EXPECT_EQ(b4.params.by_class.at(ParamClass::Vision), 415'347'712u);
  EXPECT_EQ(b2.params.by_class.at(ParamClass::Vision), 406'957'056u);
  EXPECT_EQ(b4.params.derived_total, 4'022'468'096ull + 415'347'712ull);
  EXPECT_EQ(b2.params.derived_total, 1'720'574'976ull + 406'957'056ull);
}

TEST(CatalogueAudit, EveryBuildSizeIsAPlausibleBitsPerParameter) {
  // A file size read off a listing is the Hub's 3-digit print; a slip of a digit would put a
  // build outside any GGUF tier. Over the derived total every listed build lies between the
  // 1.3-bit UD-Q1 tiers and 16-bit F16 (plus a little for file metadata): 1 to 17 bits.
  size_t builds = 0;
  for (const auto& m : Catalogue::builtin().models()) {
    for (const auto& b : m.builds) {
      SCOPED_TRACE(m.id + " " + b.name);
      const double bits = static_cast<double>(b.bytes) * 8.0 / static_cast<double>(m.params.total());
      EXPECT_GE(bits, 1.0);
      EXPECT_LE(bits, 17.0);
      EXPECT_FALSE(b.source.empty());
      ++builds;
    }
  }
  EXPECT_GE(builds, 40u);
}

TEST(CatalogueAudit, Qwen35And36CountTheirVisionTowerToThePublishedByte) {
  // Published BF16 model.safetensors.index.json total_size values, each quoted by several public
  // copies: Qwen3.6-35B-A3B 71,903,645,408 bytes; Qwen3.6-27B 55,562,855,904 bytes, whose
  // tensor census also gives 27,781,427,952 parameters of which 460,730,096 are vision. The
  // Qwen3.5-27B entry has that geometry. Vision by hand (deepstack list empty): patch 1,770,624 +
  // positions 2,654,208 + 27 x 15,239,504 + merger 2304 + 4608^2 + 4608 + 4608 x 5120 + 5120.
  EXPECT_EQ(model("qwen3.6-35b-a3b").native.bytes, 71'903'645'408u);
  const Model& q27 = model("qwen3.5-27b");
  EXPECT_EQ(q27.params.by_class.at(ParamClass::Vision), 460'730'096u);
  EXPECT_EQ(q27.params.derived_total, 27'781'427'952u);
  EXPECT_EQ(q27.native.bytes, 55'562'855'904u);
}

TEST(CatalogueAudit, Q8ZeroBuildsMatchTheDerivedTotalAtThirtyFourBytesPerThirtyTwoWeights) {
  // A Q8_0 GGUF stores every block of 32 weights in 34 bytes (32 int8 + one fp16 scale: ggml's
  // block_q8_0), only the small 1-D norms stay F32 and the header adds a few MB of tokenizer, so
  // the file is the derived total x 34/32 within a fraction of a percent. The sizes are exact
  // bytes pinned with their sha256 (data/models/*/facts.json builds): the Qwen team's
  // Qwen3-30B-A3B-Q8_0.gguf 32,483,931,648 and unsloth's Qwen3-Coder-30B-A3B-Instruct-Q8_0.gguf
  // 32,483,935,392, two files of the same geometry; and unsloth's GLM-5.3 Q8_0, 801,357,677,216
  // bytes over 17 shards, each shard's size pinned with its sha256 at revision 346b3591. An
  // independent check of the derived count.
  for (const char* id : {"qwen3-30b-a3b", "qwen3-coder-30b-a3b", "glm-5.3"}) {
    SCOPED_TRACE(id);
    const Model& m = model(id);
    uint64_t q8 = 0;
    for (const auto& b : m.builds) {
      if (contains(b.name, "-Q8_0")) q8 = b.bytes;
    }
    ASSERT_GT(q8, 0u);
    const double blocks = static_cast<double>(m.params.total()) * 34.0 / 32.0;
    EXPECT_LT(std::abs(static_cast<double>(q8) - blocks) / blocks, 0.005);
    EXPECT_GT(static_cast<double>(q8), blocks);  // the header and the F32 norms only add
  }
}

TEST(CatalogueAudit, ListedQ8ZeroFoldersAgreeWithTheDerivedTotal) {
  // The Q8_0 builds read from github.com/janhq/model-catalog or
  // github.com/AtomicBot-ai/atomic-chat-model-catalog (each file's Hub API size / 1024^3, printed
  // to one decimal: +-0.05 GiB a shard) must be the derived total x 34/32 (ggml's Q8_0 block)
  // within that rounding plus the header and F32 norms. By hand for the widest cases, Kimi K2's 23
  // shards: +-1.15 GiB over 1,090.9 GB is 0.11%; bartowski's GLM-5.1, 21 shards: +-1.05 GiB over
  // 800.9 GB is 0.14%; headers and norms add under 0.2%, so 0.5% holds every entry below while a
  // wrong layer count or expert width (several %) would not. Only entries whose GGUF carries every
  // weight the derived total counts (no mmproj-split vision tower, no MTP layer the converter
  // drops) are asked.
  for (const char* id : {"qwen3-235b-a22b", "qwen3-coder-480b-a35b", "kimi-k2", "mixtral-8x7b",
                         "granite-4.0-h-small", "glm-4.7", "glm-4.5-air", "qwen2.5-14b", "llama-3-70b",
                         "glm-4.5", "glm-5.1", "glm-5.2"}) {
    SCOPED_TRACE(id);
    const Model& m = model(id);
    const Build* q8 = nullptr;
    for (const auto& b : m.builds) {
      const bool listed = contains(b.source, "janhq/model-catalog") || contains(b.source, "atomic-chat-model-catalog");
      if (listed && (contains(b.name, "Q8_0") || contains(b.name, "q8_0"))) q8 = &b;
    }
    ASSERT_NE(q8, nullptr);
    const double blocks = static_cast<double>(m.params.total()) * 34.0 / 32.0;
    EXPECT_LT(std::abs(static_cast<double>(q8->bytes) - blocks) / blocks, 0.005) << q8->name;
  }
}

TEST(CatalogueAudit, OneQuantizerOneGeometryOneQ4KMFileSize) {
  // Exact bytes, each the Hub's LFS pointer at a pinned revision (data/models/*/facts.json builds):
  // bartowski's Q4_K_M of Llama 3.1 70B Instruct is 42,520,398,400 bytes, of
  // DeepSeek-R1-Distill-Llama-70B 42,520,395,936 and of Llama 3.3 70B Instruct 42,520,398,816.
  // The three entries have one geometry (80 layers, 8192 wide, 64/8 heads, MLP 28672,
  // 128,256-row vocabulary: the derived totals are equal), and the same quantizer's recipe puts
  // the same type on every tensor, so the files may differ only by header strings (tokenizer,
  // chat template): 2,464 and 416 bytes here. A wrong size read for any would differ by a tier's
  // worth of bytes (GBs), not by kilobytes.
  const Model& l31 = model("llama-3.1-70b");
  const Model& r1 = model("deepseek-r1-distill-llama-70b");
  const Model& l33 = model("llama-3.3-70b");
  EXPECT_EQ(l31.params.derived_total, r1.params.derived_total);
  EXPECT_EQ(l31.params.derived_total, l33.params.derived_total);
  auto q4km = [](const Model& m) -> uint64_t {
    for (const auto& b : m.builds) {
      if (contains(b.name, "-Q4_K_M") && contains(b.source, "huggingface.co/bartowski/")) return b.bytes;
    }
    return 0;
  };
  ASSERT_EQ(q4km(l31), 42'520'398'400u);
  ASSERT_EQ(q4km(r1), 42'520'395'936u);
  ASSERT_EQ(q4km(l33), 42'520'398'816u);
  EXPECT_LT(q4km(l31) - q4km(r1), 1'000'000u);
  EXPECT_LT(q4km(l33) - q4km(l31), 1'000'000u);
}

TEST(CatalogueAudit, DerivedTotalsAreTheHubsCheckpointCounts) {
  // tests/data/hub-parameter-counts.json: the Hub API's safetensors.total of each entry's own
  // repository (the elements its checkpoint stores), as github.com/AlexsJones/llmfit records it
  // (@ a3e0eb27). None of these counts was used to build the catalogue, so they check the derived
  // totals from outside. The Hub counts what the files store: the derived (loaded) total plus any
  // stored copy (Qwen3 0.6B/1.7B's lm_head beside a tied embedding); with each entry's stated MTP
  // copies (GLM-4.6 and GLM-5/5.1 store none) every BF16 entry agrees to the parameter. FP8
  // checkpoints differ only by the F32 block scales the Hub also counts (under 0.01%).
  std::ifstream in(std::string(VRAMCALC_TEST_DATA_DIR) + "/hub-parameter-counts.json");
  ASSERT_TRUE(in.good());
  const auto data = nlohmann::json::parse(in);
  size_t exact = 0;
  for (const auto& row : data.at("models")) {
    const std::string id = row.at("id").get<std::string>();
    SCOPED_TRACE(id);
    const int64_t hub = row.at("hub_total").get<int64_t>();
    const Params& p = model(id.c_str()).params;
    const int64_t derived = static_cast<int64_t>(p.derived_total + p.stored_copies);
    if (row.contains("within")) {
      EXPECT_LT(std::abs(static_cast<double>(hub - derived)) / static_cast<double>(hub), row.at("within").get<double>());
      EXPECT_GT(hub, derived) << "block scales only add elements";
    } else {
      EXPECT_EQ(hub - derived, row.value("hub_minus_derived", int64_t{0})) << row.value("why", "");
      if (!row.contains("hub_minus_derived")) ++exact;
    }
  }
  EXPECT_GE(exact, 40u);
}

TEST(CatalogueAudit, Qwen25OnePointFiveBCountsItsTiedCheckpointToTheByte) {
  // Qwen2.5-1.5B-Instruct's published config by hand: 28 layers x (q 1536 x 1536 + 1536 bias,
  // k and v 1536 x 256 + 256 bias each, o 1536 x 1536, MLP 3 x 1536 x 8960, two norms 2 x 1536)
  // = 28 x 46,797,824 = 1,310,339,072 (the card's "1.31B non-embedding"), plus the tied embedding
  // 151,936 x 1,536 = 233,373,696 and the final norm 1,536: 1,543,714,304, the Hub's count of the
  // checkpoint (tests/data/hub-parameter-counts.json). Its model.safetensors holds 3,087,428,608
  // bytes of BF16 tensor data and no lm_head.weight (github.com/Kasamix/redline-llm
  // docs/MODEL_SPEC.md, from the header at revision 989aa798): 2 bytes x that count, no stored copy.
  const Model& m = model("qwen2.5-1.5b");
  ASSERT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.params.derived_total, 1'543'714'304u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Embedding), 233'373'696u);
  EXPECT_EQ(m.params.by_class.count(ParamClass::OutputHead), 0u);
  EXPECT_EQ(m.params.active_by_class.at(ParamClass::OutputHead), 233'373'696u);  // decode reads the tied matrix
  EXPECT_EQ(m.params.stored_copies, 0u);
  EXPECT_EQ(m.native.bytes, 3'087'428'608u);
  EXPECT_EQ(m.native.download_bytes(), 3'087'428'608u);
}

TEST(CatalogueAudit, Qwen25HalfBCountsItsTiedCheckpointToTheByte) {
  // Qwen2.5-0.5B-Instruct's published config (the file here is that file byte for byte: 659 bytes,
  // git blob 0dbb1612 at revision 7ae55760) by hand: 24 layers x (q 896 x 896 + 896 bias, k and v
  // 896 x 128 + 128 bias each, o 896 x 896, MLP 3 x 896 x 4864, two norms 2 x 896) = 24 x 14,912,384
  // = 357,897,216 (the card's "0.36B non-embedding"), plus the tied embedding 151,936 x 896 =
  // 136,134,656 and the final norm 896: 494,032,768, the Hub's count of the checkpoint. Its
  // model.safetensors is 988,097,824 bytes (the Hub's blob listing at that revision): 2 x 494,032,768
  // = 988,065,536 of BF16 tensor data and a 32,288-byte header, so no lm_head copy is stored.
  const Model& m = model("qwen2.5-0.5b");
  ASSERT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.params.derived_total, 494'032'768u);
  EXPECT_EQ(m.params.by_class.at(ParamClass::Embedding), 136'134'656u);
  EXPECT_EQ(m.params.stored_copies, 0u);
  EXPECT_EQ(m.native.bytes, 988'065'536u);
  EXPECT_LT(988'097'824u - m.native.download_bytes(), 151'936u * 896u * 2u);  // less than a head copy's bytes
}

TEST(CatalogueAudit, FalconH1ThirtyFourBCountsItsParallelMixersByHand) {
  // tiiuae/Falcon-H1-34B-Instruct's published config by hand: every one of the 72 layers holds
  // attention (q and o 5,120 x 2,560, k and v 5,120 x 512: 31,457,280), the MLP (gate, up, down
  // 3 x 5,120 x 21,504: 330,301,440) and a Mamba2 mixer beside it (in_proj 5,120 x (2 x 4,096 +
  // 2 x 2 groups x 256 + 32 heads) = 47,349,760; conv1d (4,096 + 1,024) x 4 + bias 5,120 = 25,600;
  // dt_bias, A_log, D 3 x 32; its RMS norm 4,096; out_proj 4,096 x 5,120 = 20,971,520: 68,351,072),
  // and two norms 10,240: 430,120,032 a layer, 30,968,642,304 in all; plus the untied embedding and
  // head 2 x 261,120 x 5,120 = 2,673,868,800 and the final norm 5,120: 33,642,516,224.
  const Model& m = model("falcon-h1-34b");
  EXPECT_EQ(m.params.derived_total, 33'642'516'224u);
  EXPECT_EQ(m.params.derived_active, 33'642'516'224u - 1'336'934'400u);  // the input embedding is not read per token as a matrix
  EXPECT_EQ(m.native.bytes, 2u * 33'642'516'224u);
}

TEST(CatalogueMtp, EmbeddingAndHeadCopiesAreCountedWhereTheCheckpointStoresThem) {
  // GLM-4.5 and GLM-4.6 share one geometry (92 layers, hidden 5,120, vocab 151,552, one MTP layer);
  // only GLM-4.5's checkpoint stores model.layers.92.embed_tokens and shared_head.head (vLLM PR
  // #27597): 2 x 151,552 x 5,120 = 1,551,892,480 parameters, worked by hand.
  const Model& glm45 = model("glm-4.5");
  const Model& glm46 = model("glm-4.6");
  EXPECT_EQ(glm45.params.mtp_copies, 1551892480u);
  EXPECT_EQ(glm46.params.mtp_copies, 0u);
  EXPECT_EQ(glm45.params.derived_total - glm46.params.derived_total, 1551892480u);
  EXPECT_EQ(glm45.params.by_class.at(ParamClass::Mtp) - glm46.params.by_class.at(ParamClass::Mtp), 1551892480u);
  EXPECT_TRUE(contains(glm46.provenance.at("params.mtp copies"), "not stored"));
  EXPECT_TRUE(contains(glm46.provenance.at("params.mtp copies"), "vllm-project/vllm/pull/27597"));
  // GLM-5's layout (glm_moe_dsa) stores none; DeepSeek-V3's stores both: 2 x 129,280 x 7,168.
  EXPECT_EQ(model("glm-5").params.mtp_copies, 0u);
  EXPECT_EQ(model("glm-5.1").params.mtp_copies, 0u);
  EXPECT_EQ(model("glm-5.3").params.mtp_copies, 0u);
  EXPECT_EQ(model("deepseek-v3").params.mtp_copies, 1853358080u);
  EXPECT_EQ(model("deepseek-v3.2").params.mtp_copies, 1853358080u);
  // Qwen3.5's config says it: mtp_use_dedicated_embeddings false, so no copies.
  EXPECT_EQ(model("qwen3.5-27b").params.mtp_copies, 0u);
  // In DeepSeek-V3's FP8 checkpoint the copies stay BF16 beside the FP8 MTP layer: 2 bytes each,
  // 3,706,716,160 bytes, instead of FP8's ~1 byte.
  const Model& v3 = model("deepseek-v3");
  const QuantFormat* fp8 = QuantTable::builtin().find_type("FP8");
  ASSERT_NE(fp8, nullptr);
  const uint64_t mtp = v3.params.by_class.at(ParamClass::Mtp);
  EXPECT_EQ(v3.native.bytes_by_class.at(ParamClass::Mtp), fp8->bits.bytes_for(mtp - 1853358080u) + 3706716160u);
}

TEST(CatalogueStoredCopies, TiedHeadCopyIsInTheDownloadNotInTheLoadedWeights) {
  // Qwen/Qwen3-0.6B (tie_word_embeddings true) stores lm_head.weight too: the Hub counts
  // 751,632,384 elements = the tied geometry's 596,049,920 + 151,936 x 1,024 = 155,582,464 (by hand).
  const Model& q = model("qwen3-0.6b");
  EXPECT_EQ(q.params.derived_total, 596049920u);
  EXPECT_EQ(q.params.stored_copies, 155582464u);
  EXPECT_EQ(q.native.bytes, 2u * 596049920u);          // loaded: BF16, one matrix for embedding and head
  EXPECT_EQ(q.native.copy_bytes, 2u * 155582464u);     // the copy, BF16
  EXPECT_EQ(q.native.download_bytes(), 2u * 751632384u);  // the repository's safetensors, tensor bytes
  // What the engines load is the one matrix: the native weights line is the loaded figure and says
  // what the download holds beside it.
  Scenario s;
  s.context = 4096;
  const Estimate e = estimate(q, s);
  EXPECT_EQ(e.lines.front().bytes, 1192099840u);
  EXPECT_TRUE(contains(e.lines.front().assumption, "copy of the tied embedding")) << e.lines.front().assumption;
  EXPECT_TRUE(contains(e.lines.front().assumption, "1,503,264,768")) << e.lines.front().assumption;
  // An untied entry has no copy: its download is what it loads.
  EXPECT_EQ(model("qwen3-8b").params.stored_copies, 0u);
  EXPECT_EQ(model("qwen3-8b").native.download_bytes(), model("qwen3-8b").native.bytes);
}

TEST(CatalogueStoredCopies, QwensOwnGgufBuildsHoldTheLoadedTensorsOnly) {
  // Qwen's own Q8_0 GGUFs of Qwen3 0.6B and 1.7B (639,446,688 and 1,834,426,016 bytes, listed in the
  // entries) share one tokenizer, so their metadata is the same size and their difference is the
  // difference of their tensors: 2-D weights at Q8_0 (34 bytes per 32) and norms at F32. Over the
  // loaded counts (no lm_head copy) that is 1,124,466,688 x 34/32 + 58,368 x 4 = 1,194,979,328 bytes,
  // worked by hand; counting the stored copies would add (311,164,928 - 155,582,464) x 34/32 =
  // 165,306,368.
  auto q8_tensor_bytes = [](const Model& m) {
    const uint64_t norms = m.params.by_class.at(ParamClass::Norms);
    return (m.params.derived_total - norms) / 32 * 34 + norms * 4;
  };
  const Model& small = model("qwen3-0.6b");
  const Model& large = model("qwen3-1.7b");
  ASSERT_NE(small.find_build("Qwen3-0.6B-Q8_0"), nullptr);
  ASSERT_NE(large.find_build("Qwen3-1.7B-Q8_0"), nullptr);
  const uint64_t file_difference = large.find_build("Qwen3-1.7B-Q8_0")->bytes - small.find_build("Qwen3-0.6B-Q8_0")->bytes;
  EXPECT_EQ(file_difference, 1194979328u);
  EXPECT_EQ(q8_tensor_bytes(large) - q8_tensor_bytes(small), file_difference);
}

TEST(CatalogueStoredCopies, FactsAreCheckedWhenRead) {
  const std::string tied_config = R"({"model_type": "qwen3", "num_hidden_layers": 1, "hidden_size": 64, "vocab_size": 32,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32, "tie_word_embeddings": TIED,
    "max_position_embeddings": 128, "torch_dtype": "bfloat16"})";
  auto config = [&](bool tied) {
    std::string c = tied_config;
    c.replace(c.find("TIED"), 4, tied ? "true" : "false");
    return c;
  };
  const std::string facts = R"({"id": "t", "name": "T", "stored_tensors": {"tied_head_copy": {"value": true, "source": "a listing"}}})";
  const Model m = model_from_facts(facts, config(true), "test config.json");
  EXPECT_EQ(m.params.stored_copies, 32u * 64u);
  EXPECT_EQ(m.native.copy_bytes, 2u * 32u * 64u);
  EXPECT_TRUE(contains(m.provenance.at("params.stored_copies"), "a listing"));
  EXPECT_THROW(model_from_facts(facts, config(false), "test config.json"), InputError);  // no copy of an untied head
  EXPECT_THROW(model_from_facts(R"({"id": "t", "name": "T", "stored_tensors": {"lm_head": {"value": true, "source": "x"}}})", config(true), "c"),
               std::invalid_argument);
  EXPECT_THROW(model_from_facts(R"({"id": "t", "name": "T", "stored_tensors": {"tied_head_copy": {"value": true}}})", config(true), "c"),
               std::invalid_argument);
}
