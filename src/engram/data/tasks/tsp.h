// Travelling salesman solvers for the Pointer Network TSP task: tour length and validity, the exact
// Held-Karp dynamic programme (n <= 20), and a seeded multi-start 2-opt + Or-opt local search for
// larger n, plus heuristic_gap() so a benchmark can record how far the heuristic is from optimal.
//
// Dims: n cities. points: [n, 2] (x, y) row-major. A tour is a permutation of 0..n-1 starting at
// city 0; the edge from the last city back to city 0 is implied (files add the closing city).
// Solvers return tours in canonical form (canonical_tour), so equal tours compare equal.
// Distances are Euclidean, computed in double (Held-Karp accumulates its table in float). Every
// function here refuses (engram::Error) a coordinate that is not finite or whose magnitude is over
// kTspMaxCoordinate, where distances and tour lengths could overflow.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace engram::data::tasks {

// Limit (docs/limits.md): |coordinate| <= this (distances then stay below 3e18, sums of 10,000
// of them far inside float range).
constexpr double kTspMaxCoordinate = 1e18;

inline constexpr int kHeldKarpMaxN = 20;

// Length of the closed tour (including the edge back to tour[0]); 0 for fewer than 2 cities.
// Indices must be in 0..n-1.
double tour_length(std::span<const float> points, std::span<const int> tour);

// True when tour is a permutation of 0..n-1 with tour[0] == 0 (n >= 1).
bool is_valid_tour(std::span<const int> tour, int64_t n);

// The same cycle starting at city 0, oriented so that tour[1] < tour[n-1] (n >= 3). Requires a
// permutation of 0..n-1.
std::vector<int> canonical_tour(std::span<const int> tour);

// Exact optimum by Held-Karp bitmask DP over the cities 1..n-1: O(2^n n^2) time, a float table of
// 2^(n-1) (n-1) entries (n = 20: 10M entries, 40 MB; parents are recovered by a backward pass, not
// stored). Requires 1 <= n <= kHeldKarpMaxN. Ties between tours within float rounding of the
// optimum are broken arbitrarily.
std::vector<int> held_karp_tour(std::span<const float> points);

// Greedy tour from city 0: always the nearest unvisited city (ties: lower index).
std::vector<int> nearest_neighbour_tour(std::span<const float> points);

// Local search to a local optimum of 2-opt (reverse a segment) and Or-opt (move a segment of 1-3
// cities elsewhere, either way round), first improvement; city 0 stays first. Never lengthens the
// tour. Requires a valid tour.
std::vector<int> improve_tour(std::span<const float> points, std::vector<int> tour);

struct TspHeuristicOptions {
  int starts = 8;     // start 0: nearest neighbour; starts 1..: uniformly random tours
  uint64_t seed = 1;  // for the random starts
};
// improve_tour from each start; the shortest result (canonical). Never longer than
// improve_tour(nearest_neighbour_tour(points)). Requires n >= 1 and starts >= 1.
std::vector<int> heuristic_tour(std::span<const float> points, const TspHeuristicOptions& options);

// Mean of tour_length(heuristic) / tour_length(Held-Karp) - 1 over `instances` random instances of
// n uniform points (random_points in pointer_tasks.h, instance i from instance_rng(seed, i)),
// heuristic_tour with `starts` starts. Requires 2 <= n <= kHeldKarpMaxN. Cost: instances Held-Karp
// solves (about 30 ms each at n = 20).
double heuristic_gap(int n, int instances, int starts, uint64_t seed);

}  // namespace engram::data::tasks
