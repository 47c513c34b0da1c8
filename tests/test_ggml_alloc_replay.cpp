// The replay of ggml-alloc's graph allocator (src/engines/ggml_alloc_replay.cpp) on small graphs
// whose packing is worked out by hand from ggml-alloc.c's rules (llama.cpp 80fb11ac).
#include <gtest/gtest.h>

#include "engines/ggml_alloc_replay.h"

using namespace vc;

TEST(GgmlAllocReplay, PadsToTheAlignmentAndFreesAfterTheLastConsumer) {
  // a (100 B, padded to 128) feeds b (64 B); a is freed once b has run, so c (128 B) reuses a's
  // block: the buffer ends at 128 + 64 = 192.
  GgmlGraph g;
  const int in = g.leaf(32);
  const int a = g.node(100, {in});
  const int b = g.node(64, {a});
  g.node(128, {b});
  EXPECT_EQ(ggml_alloc_peak(g, 32), 32u + 128u + 64u);
}

TEST(GgmlAllocReplay, InPlaceOnlyOverASoleConsumer) {
  // x (256 B) has two consumers: the in-place op y cannot take it over and gets its own 256 B;
  // z, whose parent y has no other consumer, runs in y's block. 256 + 256.
  GgmlGraph g;
  const int x = g.leaf(256);
  const int y = g.node(256, {x}, x);
  const int z = g.node(256, {y}, y);
  g.node(32, {x, z});
  EXPECT_EQ(ggml_alloc_peak(g, 32), 256u + 256u + 32u);
}

TEST(GgmlAllocReplay, AViewKeepsItsSourceAliveAndIsNeverTakenOver) {
  // p (512 B) is read through a view only; the in-place op on the view gets a new block (a view
  // is not owned by the allocator), and p stays until the view's last consumer has run: q (512 B)
  // cannot reuse p's block, so the end is 512 + 512 + 512.
  GgmlGraph g;
  const int in = g.leaf(0);
  const int p = g.node(512, {in});
  const int v = g.view(p);
  const int r = g.node(512, {v}, v);
  const int q = g.node(512, {r});
  g.node(0, {v, q});
  EXPECT_EQ(ggml_alloc_peak(g, 32), 512u * 3);
}

TEST(GgmlAllocReplay, BestFitSkipsTheLastBlockAndMergesNeighbours) {
  // Leafs a (64) b (128) c (64) d (32) sit at 0, 64, 192, 256; the end is 288.
  // n1 (32): no hole yet, at the end 288..320; then a and c are freed: holes 0..64 and 192..256.
  // n2 (32): two equal holes, the later wins (best fit, ties to the later): 192..224; n1 is
  //   freed and merges into the open end, which starts at 288 again.
  // n3 (96): fits no hole, at the end 288..384; b (64..192) and n2 (192..224) are freed and
  //   merge with the holes on both sides into 0..256.
  // n4 (256) fits that merged hole exactly: the buffer ends at 384 (640 without merging).
  GgmlGraph g;
  const int a = g.leaf(64), b = g.leaf(128), c = g.leaf(64), d = g.leaf(32);
  const int n1 = g.node(32, {a, c});
  const int n2 = g.node(32, {n1});
  const int n3 = g.node(96, {b, n2});
  g.node(256, {n3, d});
  EXPECT_EQ(ggml_alloc_peak(g, 32), 384u);
}

TEST(GgmlAllocReplay, OutputsAreNeverFreed) {
  // in 0..32, o 256 B at 32..288; n (32 B) takes in's freed block. o is not freed after its
  // consumer, so the last tensor (256 B) goes to the end, 288..544 (it would reuse o's block,
  // ending at 288, were o an ordinary tensor).
  GgmlGraph g;
  const int in = g.leaf(32);
  const int o = g.node(256, {in});
  g.mark_output(o);
  const int n = g.node(32, {o});
  g.node(256, {n});
  EXPECT_EQ(ggml_alloc_peak(g, 32), 544u);
}
