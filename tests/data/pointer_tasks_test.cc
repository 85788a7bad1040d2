// Pointer Network tasks: sort labels, convex hull against a naive O(n^3) hull, polygon helpers,
// Held-Karp against brute force, the 2-opt + Or-opt heuristic, reproducible batches, and the
// paper's file format (round trip and every bad-line message).
#include <gtest/gtest.h>

#include <functional>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "data/test_util.h"
#include "engram/core/error.h"
#include "engram/data/tasks/pointer_tasks.h"
#include "engram/data/tasks/tsp.h"
#include "io/expect_error.h"

namespace engram::data::tasks {
namespace {

using data::testing::TempDir;
using io::testing::error_of;
using io::testing::expect_message;

// ---- references ----

double cross3(const std::vector<float>& p, int o, int a, int b) {
  const double ox = p[2 * o], oy = p[2 * o + 1];
  return (p[2 * a] - ox) * (p[2 * b + 1] - oy) - (p[2 * a + 1] - oy) * (p[2 * b] - ox);
}

// O(n^3): i -> j is a counter-clockwise hull edge when every other point is strictly left of it
// or on the closed segment [i, j]. Coincident points are represented by their lowest index.
std::vector<int> naive_hull(const std::vector<float>& p) {
  const int n = static_cast<int>(p.size() / 2);
  std::vector<int> u;
  for (int i = 0; i < n; ++i) {
    bool first = true;
    for (int j = 0; j < i; ++j) {
      first = first && !(p[2 * i] == p[2 * j] && p[2 * i + 1] == p[2 * j + 1]);
    }
    if (first) u.push_back(i);
  }
  if (u.size() <= 1) return u;
  std::map<int, int> next;
  for (const int i : u) {
    for (const int j : u) {
      if (i == j) continue;
      bool edge = true;
      for (const int k : u) {
        if (k == i || k == j) continue;
        const double c = cross3(p, i, j, k);
        const bool between = std::min(p[2 * i], p[2 * j]) <= p[2 * k] &&
                             p[2 * k] <= std::max(p[2 * i], p[2 * j]) &&
                             std::min(p[2 * i + 1], p[2 * j + 1]) <= p[2 * k + 1] &&
                             p[2 * k + 1] <= std::max(p[2 * i + 1], p[2 * j + 1]);
        if (c < 0 || (c == 0 && !between)) edge = false;
      }
      if (edge) {
        EXPECT_EQ(next.count(i), 0u) << "two hull edges leave point " << i;
        next[i] = j;
      }
    }
  }
  std::vector<int> hull{next.begin()->first};  // the lowest vertex index
  while (true) {
    const int j = next.at(hull.back());
    if (j == hull[0]) break;
    hull.push_back(j);
    if (hull.size() > u.size()) break;
  }
  return hull;
}

double brute_force_tsp(const std::vector<float>& p) {
  const int n = static_cast<int>(p.size() / 2);
  std::vector<int> t(n);
  std::iota(t.begin(), t.end(), 0);
  double best = tour_length(p, t);
  while (std::next_permutation(t.begin() + 1, t.end())) best = std::min(best, tour_length(p, t));
  return best;
}

std::vector<float> pts(std::initializer_list<float> xy) { return xy; }

// ---- sorting ----

TEST(PointerSort, TargetsAreTheAscendingOrder) {
  EXPECT_EQ(sort_target(pts({0.5f, 0.1f, 0.5f, 0.0f})), (std::vector<int>{3, 1, 0, 2}));  // ties
  EXPECT_TRUE(sort_target({}).empty());
  core::Rng rng(5);
  for (int rep = 0; rep < 50; ++rep) {
    const std::vector<float> v = random_points(1 + rep % 17, 1, rng);
    const std::vector<int> t = sort_target(v);
    ASSERT_EQ(t.size(), v.size());
    std::vector<int> sorted = t;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) ASSERT_EQ(sorted[i], static_cast<int>(i));
    for (size_t i = 1; i < t.size(); ++i) ASSERT_LE(v[t[i - 1]], v[t[i]]);
  }
}

// ---- convex hull ----

TEST(Hull, MatchesNaiveHullOnRandomSets) {
  core::Rng rng(11);
  for (int rep = 0; rep < 400; ++rep) {
    const int n = 1 + static_cast<int>(rng.below(30));
    std::vector<float> p = random_points(n, 2, rng);
    if (rep % 2 == 1) {  // a 5 x 5 grid: many collinear and coincident points
      for (auto& v : p) v = std::floor(v * 5.0f) / 4.0f;
    }
    const std::vector<int> hull = convex_hull(p);
    ASSERT_EQ(hull, naive_hull(p)) << "rep " << rep << " n " << n;
    if (hull.size() >= 3) {
      EXPECT_GT(polygon_area(p, hull), 0.0);  // counter-clockwise
      EXPECT_TRUE(is_simple_polygon(p, hull));
    }
  }
}

TEST(Hull, CollinearPointsAreNotVertices) {
  // Unit square with the midpoints of two edges, the centre, and a point on the diagonal.
  const auto p = pts({0.5f, 0, 1, 1, 0, 0, 1, 0, 0.5f, 0.5f, 0, 1, 1, 0.5f, 0.25f, 0.25f});
  EXPECT_EQ(convex_hull(p), (std::vector<int>{1, 5, 2, 3}));  // from the lowest vertex index, CCW
  // Triangle with many points along its edges.
  const auto t = pts({0, 0, 0.25f, 0, 0.5f, 0, 1, 0, 0.5f, 0.5f, 0.25f, 0.25f, 0, 0.5f, 0, 1});
  EXPECT_EQ(convex_hull(t), (std::vector<int>{0, 3, 7}));
}

TEST(Hull, DuplicatePointsKeepTheLowestIndex) {
  // Index 4 duplicates vertex 1, index 0 is duplicated by index 5.
  const auto p = pts({0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0.5f, 0.5f});
  EXPECT_EQ(convex_hull(p), (std::vector<int>{0, 1, 2, 3}));
  // The duplicate with the lower index wins even when it comes later in sorted order.
  const auto q = pts({1, 1, 0, 0, 1, 0, 1, 1, 0, 1});
  EXPECT_EQ(convex_hull(q), (std::vector<int>{0, 4, 1, 2}));
}

TEST(Hull, DegenerateInputs) {
  EXPECT_TRUE(convex_hull({}).empty());
  EXPECT_EQ(convex_hull(pts({0.3f, 0.7f})), (std::vector<int>{0}));
  EXPECT_EQ(convex_hull(pts({0.3f, 0.7f, 0.3f, 0.7f, 0.3f, 0.7f})), (std::vector<int>{0}));
  EXPECT_EQ(convex_hull(pts({0.9f, 0.1f, 0.2f, 0.3f})), (std::vector<int>{0, 1}));
  EXPECT_EQ(convex_hull(pts({0.9f, 0.1f, 0.9f, 0.1f, 0.2f, 0.3f})), (std::vector<int>{0, 2}));
  // All collinear: the two endpoints, lower index first.
  const auto line = pts({0.5f, 0.5f, 1, 1, 0.25f, 0.25f, 0, 0, 0.75f, 0.75f});
  EXPECT_EQ(convex_hull(line), (std::vector<int>{1, 3}));
  const auto vertical = pts({0.5f, 0.2f, 0.5f, 0.9f, 0.5f, 0.1f});
  EXPECT_EQ(convex_hull(vertical), (std::vector<int>{1, 2}));
  EXPECT_EQ(error_of([] { convex_hull(pts({0.1f, 0.2f, 0.3f})); }).find("convex_hull"), 0u);
}

TEST(Hull, PolygonHelpers) {
  const auto p = pts({0, 0, 1, 0, 1, 1, 0, 1, 0.5f, 0, 0.5f, 0.5f});
  const std::vector<int> ccw{0, 1, 2, 3}, cw{0, 3, 2, 1};
  EXPECT_DOUBLE_EQ(polygon_area(p, ccw), 1.0);
  EXPECT_DOUBLE_EQ(polygon_area(p, cw), -1.0);
  EXPECT_DOUBLE_EQ(polygon_area(p, std::vector<int>{0, 1}), 0.0);
  EXPECT_TRUE(is_simple_polygon(p, ccw));
  EXPECT_TRUE(is_simple_polygon(p, cw));
  EXPECT_TRUE(is_simple_polygon(p, std::vector<int>{0, 4, 1, 2, 3}));   // vertex inside an edge
  EXPECT_TRUE(is_simple_polygon(p, std::vector<int>{0, 1, 2, 5, 3}));   // non-convex
  EXPECT_FALSE(is_simple_polygon(p, std::vector<int>{0, 2, 1, 3}));     // bow tie
  EXPECT_FALSE(is_simple_polygon(p, std::vector<int>{0, 1, 2, 0, 3}));  // repeated vertex
  EXPECT_FALSE(is_simple_polygon(p, std::vector<int>{0, 4, 1}));        // collinear, no area
  EXPECT_FALSE(is_simple_polygon(p, std::vector<int>{0, 1, 4, 2, 3}));  // edge folds back
  EXPECT_FALSE(is_simple_polygon(p, std::vector<int>{0, 1}));
  EXPECT_FALSE(is_simple_polygon(p, std::vector<int>{0, 1, 9}));  // bad index
  // Touching: vertex 3 lies on the non-adjacent edge 0 -> 1.
  const auto q = pts({0, 0, 2, 0, 2, 2, 1, 0, 0, 2});
  EXPECT_FALSE(is_simple_polygon(q, std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(is_simple_polygon(q, std::vector<int>{0, 3, 1, 2, 4}));

  EXPECT_TRUE(same_cycle(std::vector<int>{1, 2, 3, 4}, std::vector<int>{3, 4, 1, 2}));
  EXPECT_TRUE(same_cycle(std::vector<int>{}, std::vector<int>{}));
  EXPECT_TRUE(same_cycle(std::vector<int>{1, 2, 1, 3}, std::vector<int>{1, 3, 1, 2}));
  EXPECT_FALSE(same_cycle(std::vector<int>{1, 2, 3, 4}, std::vector<int>{4, 3, 2, 1}));
  EXPECT_FALSE(same_cycle(std::vector<int>{1, 2, 3}, std::vector<int>{1, 2, 3, 1}));
  EXPECT_FALSE(same_cycle(std::vector<int>{1, 2, 1, 3}, std::vector<int>{1, 2, 3, 1}));

  EXPECT_DOUBLE_EQ(*hull_area_coverage(p, cw, ccw), 1.0);
  EXPECT_DOUBLE_EQ(*hull_area_coverage(p, std::vector<int>{0, 1, 2}, ccw), 0.5);
  EXPECT_DOUBLE_EQ(*hull_area_coverage(p, std::vector<int>{0, 1, 2, 5, 3}, ccw), 0.75);
  EXPECT_FALSE(hull_area_coverage(p, std::vector<int>{0, 2, 1, 3}, ccw).has_value());
  EXPECT_FALSE(hull_area_coverage(p, std::vector<int>{0, 1}, ccw).has_value());
  EXPECT_FALSE(hull_area_coverage(p, ccw, std::vector<int>{0, 4}).has_value());
}

TEST(Hull, CoverageOfSubsetsOfHullVerticesIsAtMostOne) {
  core::Rng rng(21);
  int checked = 0;
  for (int rep = 0; rep < 100; ++rep) {
    const auto p = random_points(30, 2, rng);
    const auto hull = convex_hull(p);
    std::vector<int> sub;
    for (size_t i = 0; i < hull.size(); ++i) {
      if (i == 0 || rng.bernoulli(0.6)) sub.push_back(hull[i]);
    }
    const auto c = hull_area_coverage(p, sub, hull);
    if (sub.size() < 3) {
      EXPECT_FALSE(c.has_value());
      continue;
    }
    ASSERT_TRUE(c.has_value());
    EXPECT_GT(*c, 0.0);
    EXPECT_LE(*c, 1.0 + 1e-12);
    if (sub.size() == hull.size()) {
      EXPECT_NEAR(*c, 1.0, 1e-12);
    }
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

// ---- TSP ----

TEST(Tsp, TourHelpers) {
  const auto sq = pts({0, 0, 1, 1, 1, 0, 0, 1});
  EXPECT_DOUBLE_EQ(tour_length(sq, std::vector<int>{0, 2, 1, 3}), 4.0);
  EXPECT_DOUBLE_EQ(tour_length(sq, std::vector<int>{0, 1, 2, 3}), 2.0 + 2.0 * std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(tour_length(sq, std::vector<int>{2}), 0.0);
  EXPECT_TRUE(is_valid_tour(std::vector<int>{0, 2, 1, 3}, 4));
  EXPECT_FALSE(is_valid_tour(std::vector<int>{1, 0, 2, 3}, 4));  // not starting at 0
  EXPECT_FALSE(is_valid_tour(std::vector<int>{0, 2, 2, 3}, 4));  // repeated
  EXPECT_FALSE(is_valid_tour(std::vector<int>{0, 2, 1}, 4));     // short
  EXPECT_FALSE(is_valid_tour(std::vector<int>{0, 2, 1, 4}, 4));  // out of range
  EXPECT_FALSE(is_valid_tour(std::vector<int>{}, 0));
  EXPECT_EQ(canonical_tour(std::vector<int>{2, 1, 3, 0}), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(canonical_tour(std::vector<int>{3, 0, 1, 2}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(canonical_tour(std::vector<int>{0, 3, 2, 1}), (std::vector<int>{0, 1, 2, 3}));
}

TEST(Tsp, CoordinatesWhoseDistancesOverflowAreRefused) {
  // fuzz/corpus/pointer/crash-held-karp-overflow.txt: a file instance with a coordinate of
  // 3.4028235e38 made every Held-Karp distance +inf, no predecessor attained the cost and the
  // backward pass shifted by -1 (UBSan). Every solver and tour_length now refuse such points.
  const auto huge = pts({0, 0, 3.4028235e38f, 0, 1, 1, 0, 1});
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { held_karp_tour(huge); }, [&] { nearest_neighbour_tour(huge); },
           [&] { heuristic_tour(huge, {}); }, [&] { tour_length(huge, std::vector<int>{0, 1, 2, 3}); }}) {
    try {
      call();
      FAIL() << "a coordinate of 3.4e38 was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("city 1 has coordinate 3.40282e+38"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(held_karp_tour(pts({0, 0, std::nanf(""), 0})), Error);
  EXPECT_NO_THROW(held_karp_tour(pts({0, 0, 1e18f, 0, 0, 1e18f})));  // at the limit: fine
}

TEST(Tsp, HeldKarpMatchesBruteForce) {
  core::Rng rng(31);
  for (int n = 1; n <= 8; ++n) {
    for (int rep = 0; rep < (n <= 6 ? 40 : 15); ++rep) {
      const auto p = random_points(n, 2, rng);
      const auto t = held_karp_tour(p);
      ASSERT_TRUE(is_valid_tour(t, n));
      EXPECT_EQ(t, canonical_tour(t));
      EXPECT_NEAR(tour_length(p, t), brute_force_tsp(p), 1e-5) << "n " << n;
    }
  }
  EXPECT_EQ(held_karp_tour(pts({0.1f, 0.2f, 0.3f, 0.4f})), (std::vector<int>{0, 1}));
  EXPECT_NE(error_of([] { held_karp_tour(std::vector<float>(42, 0.5f)); }).find("1 <= n <= 20"),
            std::string::npos);
}

TEST(Tsp, HeuristicIsValidAndNeverWorseThanNearestNeighbour) {
  core::Rng rng(41);
  for (const int n : {1, 2, 3, 4, 5, 12, 30, 60}) {
    for (int rep = 0; rep < 5; ++rep) {
      const auto p = random_points(n, 2, rng);
      const auto nn = nearest_neighbour_tour(p);
      const auto improved = improve_tour(p, nn);
      const auto h = heuristic_tour(p, {4, static_cast<uint64_t>(rep)});
      ASSERT_TRUE(is_valid_tour(nn, n));
      ASSERT_TRUE(is_valid_tour(improved, n));
      ASSERT_TRUE(is_valid_tour(h, n));
      EXPECT_EQ(h, canonical_tour(h));
      EXPECT_LE(tour_length(p, improved), tour_length(p, nn) + 1e-12);
      EXPECT_LE(tour_length(p, h), tour_length(p, improved) + 1e-12);
      if (n < 12) continue;
      auto d = [&](int x, int y) {
        return std::hypot(double{p[2 * x]} - p[2 * y], double{p[2 * x + 1]} - p[2 * y + 1]);
      };
      // A 2-opt local optimum: no pair of edges can be exchanged for shorter ones.
      for (int i = 0; i + 2 < n; ++i) {
        for (int j = i + 2; j < n; ++j) {
          if (i == 0 && j == n - 1) continue;
          const int a = improved[i], b = improved[i + 1], c = improved[j];
          const int e = improved[(j + 1) % n];
          ASSERT_GE(d(a, c) + d(b, e) - d(a, b) - d(c, e), -1e-6);
        }
      }
      // An Or-opt local optimum: no segment of 1-3 cities (city 0 kept first) moves elsewhere
      // profitably, either way round.
      for (int len = 1; len <= 3; ++len) {
        for (int i = 1; i + len <= n; ++i) {
          const int pv = improved[i - 1], s0 = improved[i], s1 = improved[i + len - 1];
          const int q = improved[(i + len) % n];
          const double gain = d(pv, s0) + d(s1, q) - d(pv, q);
          for (int k = 0; k < n; ++k) {
            if (k >= i - 1 && k <= i + len - 1) continue;
            const int u = improved[k], v = improved[(k + 1) % n];
            const double add = std::min(d(u, s0) + d(s1, v), d(u, s1) + d(s0, v)) - d(u, v);
            ASSERT_GE(add - gain, -1e-6) << "n " << n << " segment " << i << "+" << len;
          }
        }
      }
    }
  }
  EXPECT_EQ(heuristic_tour(pts({0.1f, 0.2f, 0.3f, 0.4f}), {}), (std::vector<int>{0, 1}));
  const auto p = random_points(25, 2, rng);
  EXPECT_EQ(heuristic_tour(p, {6, 9}), heuristic_tour(p, {6, 9}));  // seeded
}

TEST(Tsp, HeuristicIsUsuallyOptimalOnSmallInstances) {
  core::Rng rng(51);
  int optimal = 0;
  double gap = 0;
  const int instances = 60;
  for (int rep = 0; rep < instances; ++rep) {
    const auto p = random_points(9 + rep % 5, 2, rng);  // n = 9..13
    const double opt = tour_length(p, held_karp_tour(p));
    const double h = tour_length(p, heuristic_tour(p, {4, static_cast<uint64_t>(rep)}));
    EXPECT_GE(h, opt - 1e-5);  // Held-Karp is never beaten
    optimal += h <= opt + 1e-5;
    gap += h / opt - 1.0;
  }
  // Measured: 4 starts find the optimum ~98% of the time at n = 10..15 (mean gap < 0.02%).
  EXPECT_GE(optimal, 56);             // >= 93% exactly optimal
  EXPECT_LT(gap / instances, 0.002);  // mean gap under 0.2%
  const double g = heuristic_gap(8, 10, 2, 3);
  EXPECT_GT(g, -1e-6);
  EXPECT_LT(g, 0.02);
}

// ---- instances and batches ----

TEST(PointerTasks, InstancesAreReproducibleFromSeedAndIndex) {
  for (const auto task : {PointerTask::kSort, PointerTask::kHull, PointerTask::kTsp}) {
    PointerTaskOptions o;
    o.task = task;
    o.min_n = 3;
    o.max_n = 12;
    const PointerBatch b = make_pointer_batch(o, 7, 0, 16);
    const PointerBatch tail = make_pointer_batch(o, 7, 5, 3);
    ASSERT_EQ(b.batch, 16);
    ASSERT_EQ(b.dim, pointer_task_dim(task));
    std::set<int> sizes;
    for (int64_t i = 0; i < b.batch; ++i) {
      const PointerInstance inst = make_pointer_instance(o, 7, static_cast<uint64_t>(i));
      ASSERT_EQ(b.n[i], inst.size());
      sizes.insert(b.n[i]);
      ASSERT_GE(b.n[i], 3);
      ASSERT_LE(b.n[i], 12);
      EXPECT_EQ(b.targets[i], inst.target);
      for (int64_t j = 0; j < b.max_n; ++j) {
        for (int k = 0; k < b.dim; ++k) {
          EXPECT_EQ(b.at(i, j, k), j < b.n[i] ? inst.points[j * b.dim + k] : 0.0f);
        }
      }
      EXPECT_EQ(b.targets[i], pointer_label(o, inst.points));
      if (task == PointerTask::kTsp) {
        EXPECT_TRUE(is_valid_tour(inst.target, inst.size()));
      }
      if (task == PointerTask::kHull) {
        EXPECT_EQ(inst.target, naive_hull(inst.points));
      }
      if (task == PointerTask::kSort) {
        EXPECT_EQ(inst.target.size(), inst.points.size());
      }
    }
    EXPECT_GT(sizes.size(), 4u);
    for (int64_t i = 0; i < tail.batch; ++i) EXPECT_EQ(tail.targets[i], b.targets[5 + i]);
    const PointerInstance a = make_pointer_instance(o, 7, 1), c = make_pointer_instance(o, 8, 1);
    EXPECT_NE(a.points, c.points);
    EXPECT_NE(a.points, make_pointer_instance(o, 7, 2).points);
  }
}

TEST(PointerTasks, TspLabelsUseTheHeuristicAboveTheExactLimit) {
  PointerTaskOptions o;
  o.task = PointerTask::kTsp;
  o.min_n = o.max_n = 25;
  o.tsp_exact_max_n = 8;
  const PointerInstance inst = make_pointer_instance(o, 1, 0);
  EXPECT_EQ(inst.size(), 25);
  EXPECT_TRUE(is_valid_tour(inst.target, 25));
  EXPECT_EQ(inst.target, heuristic_tour(inst.points, {o.tsp_starts, 1}));
  o.tsp_exact_max_n = 21;
  EXPECT_NE(error_of([&] { make_pointer_instance(o, 1, 0); }).find("tsp_exact_max_n"),
            std::string::npos);
  o.tsp_exact_max_n = 8;
  o.min_n = 0;
  EXPECT_NE(error_of([&] { make_pointer_instance(o, 1, 0); }).find("min_n"), std::string::npos);
}

// ---- files ----

TEST(PointerFiles, RoundTrip) {
  TempDir dir;
  for (const auto task : {PointerTask::kSort, PointerTask::kHull, PointerTask::kTsp}) {
    PointerTaskOptions o;
    o.task = task;
    o.min_n = 1;
    o.max_n = 9;
    std::vector<PointerInstance> instances;
    for (uint64_t i = 0; i < 20; ++i) instances.push_back(make_pointer_instance(o, 3, i));
    const auto fo = pointer_file_options(task);
    const std::string path = dir.file("round_trip.txt");
    write_pointer_file(path, instances, fo);
    const auto back = read_pointer_file(path, fo);
    ASSERT_EQ(back.size(), instances.size());
    for (size_t i = 0; i < back.size(); ++i) {
      EXPECT_EQ(back[i].dim, instances[i].dim);
      EXPECT_EQ(back[i].points, instances[i].points);  // bit-exact
      EXPECT_EQ(back[i].target, instances[i].target);
    }
    EXPECT_EQ(read_pointer_file(path, fo, 4).size(), 4u);
    EXPECT_EQ(read_pointer_file(path, fo, 0).size(), 0u);
  }
  PointerInstance s{1, {0.5f, 0.25f, 1.0f}, {1, 0, 2}};
  EXPECT_EQ(format_pointer_line(s, pointer_file_options(PointerTask::kSort)),
            "0.5 0.25 1 output 2 1 3");
  PointerInstance t{2, {0, 0, 1, 0, 0.5f, 1}, {0, 2, 1}};
  EXPECT_EQ(format_pointer_line(t, pointer_file_options(PointerTask::kTsp)),
            "0 0 1 0 0.5 1 output 1 3 2 1");
}

TEST(PointerFiles, ReadsThePapersFormat) {
  TempDir dir;
  const std::string path =
      dir.write("tsp.txt",
                "0.607122 0.664447 0.953593 0.021519 0.757626 0.921024 output 1 3 2 1\r\n"
                "  0.1 0.2\t0.3 0.4 output 2 1  \n"  // no closing repeat: read as is
                "0.5 0.5 output 1 1");               // one city; no final newline
  const auto v = read_pointer_file(path, {2, true});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].size(), 3);
  EXPECT_FLOAT_EQ(v[0].points[1], 0.664447f);
  EXPECT_EQ(v[0].target, (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(v[1].target, (std::vector<int>{1, 0}));
  EXPECT_EQ(v[2].target, (std::vector<int>{0}));
  // Sorting lines are 1-D and not closed (a repeated index is an error there).
  const std::string sort = dir.write("sort.txt", "0.3 0.1 0.2 output 2 3 1\n");
  EXPECT_EQ(read_pointer_file(sort, {1, false})[0].target, (std::vector<int>{1, 2, 0}));
  int seen = 0;
  for_each_pointer_line(path, {2, true}, [&](PointerInstance&&) { return ++seen < 2; });
  EXPECT_EQ(seen, 2);
  EXPECT_TRUE(read_pointer_file(dir.write("empty.txt", ""), {2, true}).empty());
}

TEST(PointerFiles, BadLinesNameFileAndLine) {
  TempDir dir;
  const std::string good = "0.1 0.2 0.3 0.4 0.5 0.6 output 1 2 3 1\n";
  std::string many;
  for (int i = 0; i <= kMaxPointerPoints; ++i) many += "0.5 0.5 ";
  many += "output 1";
  const std::string long_line = std::string(kMaxPointerLineBytes + 8, '1');
  struct Case {
    std::string line;
    std::string what;
    bool closed = true;
  };
  const std::vector<Case> cases = {
      {"", "empty line"},
      {"   \t", "empty line"},
      {"0.1 0.2 0.3 0.4 1 2", "no 'output' token"},
      {"output 1", "no coordinates before 'output'"},
      {"0.1 0.2 0.3 output 1 2", "3 coordinates is not a multiple of the point dimension 2"},
      {"0.1 0.2 0.3 0.4 output 1 3", "index 3 out of range 1..2"},
      {"0.1 0.2 0.3 0.4 output 0 1", "index 0 out of range 1..2"},
      {"0.1 0.2 0.3 0.4 output 1 -2", "index -2 out of range 1..2"},
      {"0.1 abc 0.3 0.4 output 1 2", "coordinate 'abc' is not a finite number"},
      {"0.1 0.2x 0.3 0.4 output 1 2", "coordinate '0.2x' is not a finite number"},
      {"0.1 nan 0.3 0.4 output 1 2", "coordinate 'nan' is not a finite number"},
      {"0.1 0.2 0.3 0.4 output 1 2.0", "index '2.0' is not an integer"},
      {"0.1 0.2 0.3 0.4 output 1 output", "index 'output' is not an integer"},
      {"0.1 0.2 0.3 0.4 output", "no index after 'output'"},
      {"0.1 0.2 0.3 0.4 0.5 0.6 output 1 2 2 1", "index 2 repeated"},
      {"0.1 0.2 0.3 output 1 2 1", "index 1 repeated", false},
      {many, "more than 10000 points"},
      {long_line, "line longer than 1048576 bytes"},
  };
  for (const auto& c : cases) {
    const std::string ok = c.closed ? good : "0.1 0.2 output 2 1\n";
    const std::string path = dir.write("bad.txt", ok + c.line + "\n" + ok);
    const PointerFileOptions fo{c.closed ? 2 : 1, c.closed};
    const std::string msg = error_of([&] { read_pointer_file(path, fo); });
    SCOPED_TRACE(c.what);
    expect_message(msg, {path + ":2: " + c.what});
    EXPECT_EQ(msg.find(path + ":2: "), 0u) << msg;
  }
  expect_message(error_of([&] { read_pointer_file(dir.file("missing.txt"), {}); }),
                 {"missing.txt: cannot open for reading"});
  expect_message(error_of([] { parse_pointer_line("0.1 0.2", {}, "here"); }),
                 {"here: no 'output' token"});
}

}  // namespace
}  // namespace engram::data::tasks
