// Pointer Network tasks (Vinyals, Fortunato & Jaitly 2015): sorting numbers, planar convex hull
// and the travelling salesman problem — random instances with exact labels, the geometry the
// evaluation needs (polygon area, simplicity, cyclic equality, hull area coverage), batches that
// are reproducible per instance from (seed, index), and the paper's one-instance-per-line files.
// The TSP solvers (Held-Karp, 2-opt + Or-opt) live in tsp.h.
//
// Dims: B batch, N largest n in a batch, n points of one instance, d point dimension (1 for
// sorting, 2 for hull and TSP), m length of a target index list. Indices are 0-based everywhere
// in memory; files are 1-based.
//
// Random coordinates are multiples of 2^-24 in [0, 1) (exact as float), so every orientation test
// on generated points (differences and 2x2 determinants in double) is exact: hull labels have no
// rounding ties. Points read from files are handled in double and may not be exact.
//
// File format (the paper's), one instance per line, tokens separated by ASCII whitespace:
//   sorting (d = 1):         v1 v2 ... vn output i1 i2 ... im
//   hull / TSP (d = 2):      x1 y1 x2 y2 ... xn yn output i1 i2 ... im i1
// Indices are 1-based. With `closed` (hull and TSP files) the list repeats its first index at the
// end to close the cycle; the reader drops that repeat when present (a list without it is read as
// is) and the writer always appends it. Reading checks, and reports as "PATH:LINE: what":
// a line longer than kMaxPointerLineBytes, an empty or blank line (an error, so line numbers and
// instance numbers always agree; a final '\n' does not make an empty line), no 'output' token,
// no coordinates before it, a count of coordinates that is not a multiple of d, more than
// kMaxPointerPoints points, a coordinate that is not a finite number, no index after 'output', an
// index that is not an integer, out of 1..n or repeated. '\r' before '\n' is ignored. Plain text
// only (gunzip .gz files first).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engram/core/rng.h"

namespace engram::data::tasks {

inline constexpr int64_t kMaxPointerPoints = 10000;         // points per instance / file line
inline constexpr int64_t kMaxPointerLineBytes = 1ll << 20;  // 1 MiB per file line
// Magnitude of a coordinate a model or solver reads (every task; = the TSP solvers' limit, where
// distances and tour lengths cannot overflow, and the networks' first products stay finite).
inline constexpr double kMaxPointerCoordinate = 1e18;

// The one check of a coordinate, whatever its source (a file line, run_line's text, a /v1/pointer
// request): a finite number of magnitude <= kMaxPointerCoordinate (so its float is finite too).
// Errors are "WHERE: ...".
void check_pointer_coordinate(double v, std::string_view where);

// One instance: n points of dimension d and its target index list.
struct PointerInstance {
  int dim = 2;                // d
  std::vector<float> points;  // [n, d] row-major
  std::vector<int> target;    // [m] 0-based indices into the points
  int64_t size() const { return dim > 0 ? static_cast<int64_t>(points.size()) / dim : 0; }  // n
};

// ---- labels ----

// Sorting: the indices of `values` in ascending order of value (ties: lower index first).
// values: [n]. Returns [n], a permutation of 0..n-1.
std::vector<int> sort_target(std::span<const float> values);

// Convex hull by Andrew's monotone chain, O(n log n). points: [n, 2].
// Returns the hull's vertex indices counter-clockwise (x right, y up), starting from the lowest
// index among them. Rules: points strictly inside an edge (collinear) are not vertices; of
// coincident points only the lowest index can be a vertex. Degenerate inputs: n == 0 -> {};
// all points coincident -> {lowest index}; all collinear -> the two endpoints {lower, higher}.
std::vector<int> convex_hull(std::span<const float> points);

// ---- polygon helpers (points [n, 2]; a polygon is a list of indices into them, closing edge
// from the last vertex back to the first implied) ----

// Signed shoelace area: > 0 for counter-clockwise, < 0 for clockwise, 0 for fewer than 3 vertices.
// Indices must be in 0..n-1.
double polygon_area(std::span<const float> points, std::span<const int> polygon);

// True when the polygon has >= 3 vertices, valid indices, pairwise distinct vertex coordinates,
// non-zero area, no two non-adjacent edges touching or crossing, and no two adjacent edges folding
// back onto each other. A vertex in the middle of a straight edge is allowed.
bool is_simple_polygon(std::span<const float> points, std::span<const int> polygon);

// True when b is a rotation of a (same cyclic sequence, same orientation; a reversed cycle is
// different). Two empty sequences are equal.
bool same_cycle(std::span<const int> a, std::span<const int> b);

// Area coverage of a predicted hull: |area(predicted)| / |area(true_hull)| when `predicted` is a
// simple polygon (is_simple_polygon); nullopt when it is not or the true hull has zero area (the
// paper counts those as failures). Because the predicted vertices are input points, a simple
// predicted polygon lies inside the convex hull, so the ratio is in (0, 1] (up to rounding) and is
// 1 when the polygon is the hull itself (possibly with extra collinear vertices on its edges).
std::optional<double> hull_area_coverage(std::span<const float> points,
                                         std::span<const int> predicted,
                                         std::span<const int> true_hull);

// ---- random instances and batches ----

enum class PointerTask { kSort, kHull, kTsp };
int pointer_task_dim(PointerTask task);  // d: 1 for sorting, 2 otherwise

// The most starts of the TSP heuristic, each a whole 2-opt + Or-opt search of the instance: the
// label's time grows with them.
constexpr int kTspMaxStarts = 1000;

struct PointerTaskOptions {
  PointerTask task = PointerTask::kSort;
  int min_n = 5;  // n is drawn uniformly from [min_n, max_n] per instance (equal: fixed n)
  int max_n = 10;
  // TSP labels: exact Held-Karp for n <= tsp_exact_max_n (at most 20; n = 20 takes ~30 ms and
  // ~40 MB), the multi-start 2-opt + Or-opt heuristic with tsp_starts starts above it.
  int tsp_exact_max_n = 10;
  int tsp_starts = 8;  // 1 ... kTspMaxStarts
  bool labels = true;  // false: instances without a target (empty), for label-free training
};

// The generator of instance `index` of the stream `seed` (the two are hashed together, so
// neighbouring indices and seeds give independent streams).
core::Rng instance_rng(uint64_t seed, uint64_t index);

// n * d coordinates, each a multiple of 2^-24 uniform in [0, 1). Returns [n, d].
std::vector<float> random_points(int64_t n, int dim, core::Rng& rng);

// Instance `index` of stream `seed`: the same (options, seed, index) always gives the same
// instance, whatever batch it is drawn in.
PointerInstance make_pointer_instance(const PointerTaskOptions& options, uint64_t seed,
                                      uint64_t index);

// The label of `points` [n, d] for `task` (sort_target, convex_hull, or a TSP tour as for
// make_pointer_instance).
std::vector<int> pointer_label(const PointerTaskOptions& options, std::span<const float> points);

struct PointerBatch {
  int64_t batch = 0;                      // B
  int64_t max_n = 0;                      // N
  int dim = 2;                            // d
  std::vector<float> points;              // [B, N, d], zero beyond n[b]
  std::vector<int> n;                     // [B] points in each instance
  std::vector<std::vector<int>> targets;  // [B][m_b] 0-based indices < n[b]
  float at(int64_t b, int64_t i, int k) const { return points[(b * max_n + i) * dim + k]; }
};

// Instances first_index .. first_index + batch - 1 of stream `seed`, collated.
PointerBatch make_pointer_batch(const PointerTaskOptions& options, uint64_t seed,
                                uint64_t first_index, int64_t batch);

// Pads instances (all of one dimension) into a batch; B = instances.size() >= 1.
PointerBatch collate_pointer_batch(std::span<const PointerInstance> instances);

// ---- files ----

struct PointerFileOptions {
  int dim = 2;         // d: coordinates per point
  bool closed = true;  // the index list repeats its first index at the end (hull, TSP)
  // The index list names every point once (a sorting, a full TSP tour); else any distinct points
  // (a hull's vertices).
  bool every_point = false;
};
// sort {1, open, every point}; hull {2, closed}; TSP {2, closed, every point}.
PointerFileOptions pointer_file_options(PointerTask task);

// Parses one line; errors are "WHERE: what" (the reader passes "PATH:LINE"): a coordinate that
// check_pointer_coordinate refuses, an index out of range or repeated, and with every_point an
// index list that does not name every point (a TSP reference that is not a full tour), and for
// one-dimensional points (sorting) an index list not in ascending order of value.
PointerInstance parse_pointer_line(std::string_view line, const PointerFileOptions& options,
                                   std::string_view where = "line");
// The line for an instance (no '\n'); coordinates in shortest round-trip form.
std::string format_pointer_line(const PointerInstance& instance, const PointerFileOptions& options);

// Streams the file, calling fn(instance) per line in order until fn returns false; memory is
// bounded by one line.
void for_each_pointer_line(const std::string& path, const PointerFileOptions& options,
                           const std::function<bool(PointerInstance&&)>& fn);
// All instances of a file (at most max_instances when >= 0).
std::vector<PointerInstance> read_pointer_file(const std::string& path,
                                               const PointerFileOptions& options,
                                               int64_t max_instances = -1);
void write_pointer_file(const std::string& path, std::span<const PointerInstance> instances,
                        const PointerFileOptions& options);

}  // namespace engram::data::tasks
