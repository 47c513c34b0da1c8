#include "speed/expert_balance.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace vc {
namespace {

// C(n, j) as a double (n up to a few thousand experts, j up to k).
double choose(uint64_t n, uint64_t j) {
  if (j > n) return 0;
  double c = 1;
  for (uint64_t i = 1; i <= j; ++i) c = c * static_cast<double>(n - j + i) / static_cast<double>(i);
  return c;
}

}  // namespace

double expected_busiest_rank_experts(uint64_t experts, uint64_t k, uint64_t ranks) {
  if (experts == 0 || k == 0) return 0;
  k = std::min(k, experts);
  if (ranks <= 1) return static_cast<double>(k);
  if (ranks > experts) ranks = experts;  // a rank without experts never is the busiest
  if (k > 64 || ranks > 4096) throw InputError("--experts-per-token", "expert parallelism is modelled for at most 64 active experts over 4,096 ranks");
  const double all = choose(experts, k);
  double expected = 0;
  for (uint64_t m = 1; m <= k; ++m) {
    // Ways to pick k experts with every rank holding fewer than m of them.
    std::vector<double> ways(k + 1, 0);
    ways[0] = 1;
    for (uint64_t r = 0; r < ranks; ++r) {
      const uint64_t held = experts / ranks + (r < experts % ranks ? 1 : 0);
      std::vector<double> next(k + 1, 0);
      for (uint64_t have = 0; have <= k; ++have) {
        if (ways[have] == 0) continue;
        for (uint64_t j = 0; j < m && have + j <= k; ++j) next[have + j] += ways[have] * choose(held, j);
      }
      ways.swap(next);
    }
    expected += 1 - ways[k] / all;
  }
  return expected;
}

}  // namespace vc
