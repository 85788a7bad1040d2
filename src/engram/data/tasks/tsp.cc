// TSP tour helpers, Held-Karp and 2-opt + Or-opt local search (see tsp.h).
#include "engram/data/tasks/tsp.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/data/tasks/pointer_tasks.h"

namespace engram::data::tasks {
namespace {

// Improvements smaller than this are ignored, so local search cannot cycle on rounding.
constexpr double kEps = 1e-12;

int64_t num_cities(std::span<const float> points, const char* what) {
  ENGRAM_CHECK(points.size() % 2 == 0, "{}: points must be [n, 2], got {} floats", what,
               points.size());
  for (size_t i = 0; i < points.size(); ++i)
    ENGRAM_CHECK(std::isfinite(points[i]) && std::abs(static_cast<double>(points[i])) <= kTspMaxCoordinate,
                 "{}: city {} has coordinate {:g}, outside [-{:g}, {:g}] (its distances could overflow)", what, i / 2,
                 points[i], kTspMaxCoordinate, kTspMaxCoordinate);
  return static_cast<int64_t>(points.size() / 2);
}

// Euclidean distance on [n, 2] points, in double.
struct Dist {
  std::span<const float> p;
  double operator()(int a, int b) const {
    const double dx = static_cast<double>(p[2 * a]) - p[2 * b];
    const double dy = static_cast<double>(p[2 * a + 1]) - p[2 * b + 1];
    return std::sqrt(dx * dx + dy * dy);
  }
};

// One sweep set of 2-opt moves until none improves: replace edges (a,b), (c,e) by (a,c), (b,e)
// by reversing t[i+1..j]. Position 0 never moves.
bool two_opt(std::vector<int>& t, const Dist& d) {
  const int n = static_cast<int>(t.size());
  bool any = false;
  bool improved = true;
  while (improved) {
    improved = false;
    for (int i = 0; i + 2 < n; ++i) {
      for (int j = i + 2; j < n; ++j) {
        if (i == 0 && j == n - 1) continue;  // the two edges share city t[0]
        const int a = t[i], b = t[i + 1], c = t[j], e = t[(j + 1) % n];
        const double delta = d(a, c) + d(b, e) - d(a, b) - d(c, e);
        if (delta < -kEps) {
          std::reverse(t.begin() + i + 1, t.begin() + j + 1);
          improved = any = true;
        }
      }
    }
  }
  return any;
}

// Or-opt moves until none improves: the segment t[i..i+len-1] (positions >= 1, so city 0 stays
// first) is cut out and put between two other neighbours u, v, forwards or reversed.
bool or_opt(std::vector<int>& t, const Dist& d) {
  const int n = static_cast<int>(t.size());
  bool any = false;
  bool improved = true;
  std::vector<int> next(t.size());
  while (improved) {
    improved = false;
    for (int len = 1; len <= 3 && len + 2 < n; ++len) {
      for (int i = 1; i + len <= n; ++i) {
        const int p = t[i - 1], s0 = t[i], s1 = t[i + len - 1], q = t[(i + len) % n];
        const double gain = d(p, s0) + d(s1, q) - d(p, q);
        // Edges (t[k], t[k+1]) for k outside i-1 .. i+len-1 do not touch the segment.
        int best_k = -1;
        bool best_rev = false;
        double best = gain - kEps;
        for (int k = 0; k < n; ++k) {
          if (k >= i - 1 && k <= i + len - 1) continue;
          const int u = t[k], v = t[(k + 1) % n];
          const double duv = d(u, v);
          const double fwd = d(u, s0) + d(s1, v) - duv;
          const double rev = d(u, s1) + d(s0, v) - duv;
          if (fwd < best) best = fwd, best_k = k, best_rev = false;
          if (rev < best) best = rev, best_k = k, best_rev = true;
        }
        if (best_k < 0) continue;
        // Rebuild: the tour without the segment, with the segment inserted after t[best_k].
        next.clear();
        for (int k = 0; k < n; ++k) {
          if (k >= i && k < i + len) continue;
          next.push_back(t[k]);
          if (k == best_k) {
            if (best_rev) {
              for (int s = i + len - 1; s >= i; --s) next.push_back(t[s]);
            } else {
              for (int s = i; s < i + len; ++s) next.push_back(t[s]);
            }
          }
        }
        t.swap(next);
        improved = any = true;
      }
    }
  }
  return any;
}

}  // namespace

double tour_length(std::span<const float> points, std::span<const int> tour) {
  const int64_t n = num_cities(points, "tour_length");
  const Dist d{points};
  double total = 0;
  for (size_t i = 0; i < tour.size(); ++i) {
    const int a = tour[i], b = tour[(i + 1) % tour.size()];
    ENGRAM_CHECK(a >= 0 && a < n, "tour_length: city {} out of range 0..{}", a, n - 1);
    if (tour.size() >= 2) total += d(a, b);
  }
  return total;
}

bool is_valid_tour(std::span<const int> tour, int64_t n) {
  if (n < 1 || static_cast<int64_t>(tour.size()) != n || tour[0] != 0) return false;
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (const int c : tour) {
    if (c < 0 || c >= n || seen[c]) return false;
    seen[c] = 1;
  }
  return true;
}

std::vector<int> canonical_tour(std::span<const int> tour) {
  const auto zero = std::find(tour.begin(), tour.end(), 0);
  ENGRAM_CHECK(zero != tour.end(), "canonical_tour: city 0 is not in the tour");
  std::vector<int> t(zero, tour.end());
  t.insert(t.end(), tour.begin(), zero);
  ENGRAM_CHECK(is_valid_tour(t, static_cast<int64_t>(t.size())),
               "canonical_tour: not a permutation of 0..{}", t.size() - 1);
  if (t.size() >= 3 && t[1] > t.back()) std::reverse(t.begin() + 1, t.end());
  return t;
}

std::vector<int> held_karp_tour(std::span<const float> points) {
  const int64_t n = num_cities(points, "held_karp_tour");
  ENGRAM_CHECK(n >= 1 && n <= kHeldKarpMaxN, "held_karp_tour: need 1 <= n <= {}, got {}",
               kHeldKarpMaxN, n);
  if (n <= 3) {
    std::vector<int> t(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) t[i] = i;
    return t;
  }
  // City c (1..n-1) is bit c-1 of a subset S. cost[S * m + j], j in S: the shortest path from
  // city 0 through exactly the cities of S, ending at city j + 1. Entries with j not in S are
  // never read. dist[k * mp + j]: distance between cities k + 1 and j + 1, rows padded to mp.
  const int m = static_cast<int>(n) - 1;
  const int mp = (m + 7) / 8 * 8;
  const Dist d{points};
  std::vector<float> dist(static_cast<size_t>(m) * mp, 0.0f);
  for (int k = 0; k < m; ++k) {
    for (int j = 0; j < m; ++j) dist[k * mp + j] = static_cast<float>(d(k + 1, j + 1));
  }
  const uint32_t full = (1u << m) - 1;
  auto cost = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(full + 1) * m);
  for (int j = 0; j < m; ++j) cost[(size_t{1} << j) * m + j] = static_cast<float>(d(0, j + 1));
  // Push: from each S (all its entries final, since every S \ {k} < S), cand[j] =
  // min_k cost[S][k] + dist(k, j) is the final cost of (S + {j}, j) for each j outside S.
  std::vector<float> cand(static_cast<size_t>(mp));
  for (uint32_t S = 1; S < full; ++S) {
    std::fill(cand.begin(), cand.end(), std::numeric_limits<float>::infinity());
    const float* row = &cost[static_cast<size_t>(S) * m];
    for (uint32_t bits = S; bits != 0; bits &= bits - 1) {
      const int k = std::countr_zero(bits);
      const float c = row[k];
      const float* dk = &dist[static_cast<size_t>(k) * mp];
      for (int j = 0; j < mp; ++j) {  // element-wise min: vectorises
        const float v = c + dk[j];
        cand[j] = v < cand[j] ? v : cand[j];
      }
    }
    for (uint32_t out = ~S & full; out != 0; out &= out - 1) {
      const int j = std::countr_zero(out);
      cost[static_cast<size_t>(S | (1u << j)) * m + j] = cand[j];
    }
  }
  // Backward pass: the last city, then repeatedly the predecessor that attains the cost.
  auto argmin_pred = [&](uint32_t S, int j) {  // k in S minimising cost[S][k] + dist(k, j)
    int best_k = -1;
    float best = std::numeric_limits<float>::infinity();
    for (uint32_t bits = S; bits != 0; bits &= bits - 1) {
      const int k = std::countr_zero(bits);
      const float v = cost[static_cast<size_t>(S) * m + k] + dist[static_cast<size_t>(k) * mp + j];
      if (v < best) best = v, best_k = k;
    }
    return best_k;
  };
  int last = 0;
  double best_total = std::numeric_limits<double>::infinity();
  for (int j = 0; j < m; ++j) {
    const double total = static_cast<double>(cost[static_cast<size_t>(full) * m + j]) + d(j + 1, 0);
    if (total < best_total) best_total = total, last = j;
  }
  std::vector<int> rev;  // cities from the last back to the first after 0
  uint32_t S = full;
  int j = last;
  while (true) {
    rev.push_back(j + 1);
    const uint32_t prev = S & ~(1u << j);
    if (prev == 0) break;
    j = argmin_pred(prev, j);
    S = prev;
  }
  std::vector<int> tour{0};
  tour.insert(tour.end(), rev.rbegin(), rev.rend());
  return canonical_tour(tour);
}

std::vector<int> nearest_neighbour_tour(std::span<const float> points) {
  const int64_t n = num_cities(points, "nearest_neighbour_tour");
  ENGRAM_CHECK(n >= 1, "nearest_neighbour_tour: no cities");
  const Dist d{points};
  std::vector<char> used(static_cast<size_t>(n), 0);
  std::vector<int> tour{0};
  used[0] = 1;
  while (static_cast<int64_t>(tour.size()) < n) {
    const int a = tour.back();
    int best = -1;
    double best_d = std::numeric_limits<double>::infinity();
    for (int c = 0; c < n; ++c) {
      if (used[c]) continue;
      const double dc = d(a, c);
      if (dc < best_d) best_d = dc, best = c;
    }
    used[best] = 1;
    tour.push_back(best);
  }
  return tour;
}

std::vector<int> improve_tour(std::span<const float> points, std::vector<int> tour) {
  const int64_t n = num_cities(points, "improve_tour");
  ENGRAM_CHECK(is_valid_tour(tour, n), "improve_tour: not a tour of {} cities starting at 0", n);
  if (n <= 3) return tour;
  const Dist d{points};
  two_opt(tour, d);
  while (or_opt(tour, d) && two_opt(tour, d)) {
  }
  return tour;
}

std::vector<int> heuristic_tour(std::span<const float> points, const TspHeuristicOptions& o) {
  const int64_t n = num_cities(points, "heuristic_tour");
  ENGRAM_CHECK(n >= 1 && o.starts >= 1, "heuristic_tour: need n >= 1 and starts >= 1, got {}, {}",
               n, o.starts);
  std::vector<int> best = improve_tour(points, nearest_neighbour_tour(points));
  double best_len = tour_length(points, best);
  core::Rng rng(o.seed);
  std::vector<int> start(static_cast<size_t>(n));
  for (int s = 1; s < o.starts && n > 3; ++s) {
    for (int i = 0; i < n; ++i) start[i] = i;
    rng.shuffle(start.begin() + 1, start.end());
    std::vector<int> t = improve_tour(points, start);
    const double len = tour_length(points, t);
    if (len < best_len - kEps) best_len = len, best = std::move(t);
  }
  return canonical_tour(best);
}

double heuristic_gap(int n, int instances, int starts, uint64_t seed) {
  ENGRAM_CHECK(n >= 2 && n <= kHeldKarpMaxN && instances >= 1 && starts >= 1,
               "heuristic_gap: need 2 <= n <= {}, instances >= 1, starts >= 1; got {}, {}, {}",
               kHeldKarpMaxN, n, instances, starts);
  double sum = 0;
  for (int i = 0; i < instances; ++i) {
    core::Rng rng = instance_rng(seed, static_cast<uint64_t>(i));
    const std::vector<float> points = random_points(n, 2, rng);
    const double opt = tour_length(points, held_karp_tour(points));
    const double h = tour_length(points, heuristic_tour(points, {starts, rng.next()}));
    sum += h / opt - 1.0;
  }
  return sum / instances;
}

}  // namespace engram::data::tasks
