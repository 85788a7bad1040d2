// Pointer Network tasks: labels, polygon helpers, instances, batches and files (see
// pointer_tasks.h). TSP solvers are in tsp.cc.
#include "engram/data/tasks/pointer_tasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <numeric>

#include "engram/core/error.h"
#include "engram/data/tasks/tsp.h"

namespace engram::data::tasks {
namespace {

struct P {
  double x, y;
};

P at(std::span<const float> points, int i) { return {points[2 * i], points[2 * i + 1]}; }

// > 0 when o -> a -> b turns left (counter-clockwise), 0 when collinear.
double cross(P o, P a, P b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

int sign(double v) { return (v > 0) - (v < 0); }

int64_t count_points(std::span<const float> points, int dim, const char* what) {
  ENGRAM_CHECK(points.size() % dim == 0, "{}: points must be [n, {}], got {} floats", what, dim,
               points.size());
  return static_cast<int64_t>(points.size() / dim);
}

// p lies on the closed segment [a, b], given that the three are collinear.
bool on_segment(P a, P b, P p) {
  return std::min(a.x, b.x) <= p.x && p.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= p.y &&
         p.y <= std::max(a.y, b.y);
}

// Closed segments [a, b] and [c, d] share at least one point.
bool segments_touch(P a, P b, P c, P d) {
  const int o1 = sign(cross(a, b, c)), o2 = sign(cross(a, b, d));
  const int o3 = sign(cross(c, d, a)), o4 = sign(cross(c, d, b));
  if (o1 * o2 < 0 && o3 * o4 < 0) return true;
  return (o1 == 0 && on_segment(a, b, c)) || (o2 == 0 && on_segment(a, b, d)) ||
         (o3 == 0 && on_segment(c, d, a)) || (o4 == 0 && on_segment(c, d, b));
}

uint64_t splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void check_options(const PointerTaskOptions& o) {
  ENGRAM_CHECK(o.min_n >= 1 && o.min_n <= o.max_n && o.max_n <= kMaxPointerPoints,
               "pointer task: need 1 <= min_n <= max_n <= {}, got {} and {}", kMaxPointerPoints,
               o.min_n, o.max_n);
  ENGRAM_CHECK(o.tsp_exact_max_n >= 0 && o.tsp_exact_max_n <= kHeldKarpMaxN && o.tsp_starts >= 1 &&
                   o.tsp_starts <= kTspMaxStarts,
               "pointer task: need 0 <= tsp_exact_max_n <= {} and 1 <= tsp_starts <= {}, got {} and {}",
               kHeldKarpMaxN, kTspMaxStarts, o.tsp_exact_max_n, o.tsp_starts);
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Next whitespace-separated token of `line` from `pos`; empty at the end.
std::string_view next_token(std::string_view line, size_t& pos) {
  while (pos < line.size() && is_space(line[pos])) ++pos;
  const size_t start = pos;
  while (pos < line.size() && !is_space(line[pos])) ++pos;
  return line.substr(start, pos - start);
}

}  // namespace

// ---- labels ----

std::vector<int> sort_target(std::span<const float> values) {
  std::vector<int> idx(values.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return values[a] < values[b]; });
  return idx;
}

std::vector<int> convex_hull(std::span<const float> points) {
  const int64_t n = count_points(points, 2, "convex_hull");
  std::vector<int> u(static_cast<size_t>(n));
  std::iota(u.begin(), u.end(), 0);
  std::sort(u.begin(), u.end(), [&](int a, int b) {
    const P pa = at(points, a), pb = at(points, b);
    if (pa.x != pb.x) return pa.x < pb.x;
    if (pa.y != pb.y) return pa.y < pb.y;
    return a < b;
  });
  // Coincident points are adjacent now, lowest index first: keep only that one.
  u.erase(std::unique(u.begin(), u.end(),
                      [&](int a, int b) {
                        return at(points, a).x == at(points, b).x &&
                               at(points, a).y == at(points, b).y;
                      }),
          u.end());
  if (u.size() <= 1) return u;
  // Monotone chain: lower hull left to right, then upper hull right to left; popping on
  // cross <= 0 drops collinear points.
  std::vector<int> h(2 * u.size());
  size_t k = 0;
  auto turn = [&](size_t a, size_t b, int c) {
    return cross(at(points, h[a]), at(points, h[b]), at(points, c));
  };
  for (const int c : u) {
    while (k >= 2 && turn(k - 2, k - 1, c) <= 0) --k;
    h[k++] = c;
  }
  for (size_t i = u.size() - 1, lower = k + 1; i-- > 0;) {
    while (k >= lower && turn(k - 2, k - 1, u[i]) <= 0) --k;
    h[k++] = u[i];
  }
  h.resize(k - 1);  // the last point repeats the first
  std::rotate(h.begin(), std::min_element(h.begin(), h.end()), h.end());
  return h;
}

// ---- polygon helpers ----

double polygon_area(std::span<const float> points, std::span<const int> polygon) {
  const int64_t n = count_points(points, 2, "polygon_area");
  for (const int i : polygon) {
    ENGRAM_CHECK(i >= 0 && i < n, "polygon_area: vertex {} out of range 0..{}", i, n - 1);
  }
  if (polygon.size() < 3) return 0.0;
  const P o = at(points, polygon[0]);
  double twice = 0;
  for (size_t i = 1; i + 1 < polygon.size(); ++i) {
    twice += cross(o, at(points, polygon[i]), at(points, polygon[i + 1]));
  }
  return 0.5 * twice;
}

bool is_simple_polygon(std::span<const float> points, std::span<const int> polygon) {
  const int64_t n = count_points(points, 2, "is_simple_polygon");
  const size_t m = polygon.size();
  if (m < 3) return false;
  for (const int i : polygon) {
    if (i < 0 || i >= n) return false;
  }
  std::vector<std::pair<double, double>> xy;
  for (const int i : polygon) xy.emplace_back(at(points, i).x, at(points, i).y);
  std::sort(xy.begin(), xy.end());
  if (std::adjacent_find(xy.begin(), xy.end()) != xy.end()) return false;
  if (polygon_area(points, polygon) == 0.0) return false;
  auto v = [&](size_t i) { return at(points, polygon[i % m]); };
  for (size_t e1 = 0; e1 < m; ++e1) {
    for (size_t e2 = e1 + 1; e2 < m; ++e2) {
      const bool next = e2 == e1 + 1;            // share vertex e1 + 1
      const bool wrap = e1 == 0 && e2 == m - 1;  // share vertex 0
      if (next || wrap) {
        // Shared vertex s, other ends a and b: the edges overlap when they leave s the same way.
        const P s = next ? v(e2) : v(0);
        const P a = next ? v(e1) : v(1);
        const P b = next ? v(e2 + 1) : v(m - 1);
        const double dot = (a.x - s.x) * (b.x - s.x) + (a.y - s.y) * (b.y - s.y);
        if (cross(s, a, b) == 0.0 && dot > 0) return false;
      } else if (segments_touch(v(e1), v(e1 + 1), v(e2), v(e2 + 1))) {
        return false;
      }
    }
  }
  return true;
}

bool same_cycle(std::span<const int> a, std::span<const int> b) {
  if (a.size() != b.size()) return false;
  const size_t m = a.size();
  if (m == 0) return true;
  for (size_t shift = 0; shift < m; ++shift) {
    if (b[shift] != a[0]) continue;
    size_t i = 1;
    while (i < m && b[(shift + i) % m] == a[i]) ++i;
    if (i == m) return true;
  }
  return false;
}

std::optional<double> hull_area_coverage(std::span<const float> points,
                                         std::span<const int> predicted,
                                         std::span<const int> true_hull) {
  const double truth = std::abs(polygon_area(points, true_hull));
  if (truth == 0.0 || !is_simple_polygon(points, predicted)) return std::nullopt;
  return std::abs(polygon_area(points, predicted)) / truth;
}

// ---- random instances and batches ----

int pointer_task_dim(PointerTask task) { return task == PointerTask::kSort ? 1 : 2; }

core::Rng instance_rng(uint64_t seed, uint64_t index) {
  return core::Rng(splitmix(seed ^ splitmix(index ^ 0x5851F42D4C957F2Dull)));
}

std::vector<float> random_points(int64_t n, int dim, core::Rng& rng) {
  ENGRAM_CHECK(n >= 0 && dim >= 1, "random_points: need n >= 0 and dim >= 1, got {} and {}", n,
               dim);
  std::vector<float> p(static_cast<size_t>(n * dim));
  for (auto& v : p) v = static_cast<float>(rng.next() >> 40) * 0x1.0p-24f;
  return p;
}

std::vector<int> pointer_label(const PointerTaskOptions& o, std::span<const float> points) {
  switch (o.task) {
    case PointerTask::kSort:
      return sort_target(points);
    case PointerTask::kHull:
      return convex_hull(points);
    case PointerTask::kTsp:
      if (static_cast<int64_t>(points.size() / 2) <= o.tsp_exact_max_n) {
        return held_karp_tour(points);
      }
      return heuristic_tour(points, {o.tsp_starts, 1});
  }
  ENGRAM_CHECK(false, "pointer_label: unknown task {}", static_cast<int>(o.task));
  return {};
}

PointerInstance make_pointer_instance(const PointerTaskOptions& o, uint64_t seed, uint64_t index) {
  check_options(o);
  core::Rng rng = instance_rng(seed, index);
  const int n = o.min_n + static_cast<int>(rng.below(static_cast<uint64_t>(o.max_n - o.min_n + 1)));
  PointerInstance inst;
  inst.dim = pointer_task_dim(o.task);
  inst.points = random_points(n, inst.dim, rng);
  if (o.labels) inst.target = pointer_label(o, inst.points);
  return inst;
}

PointerBatch make_pointer_batch(const PointerTaskOptions& o, uint64_t seed, uint64_t first_index,
                                int64_t batch) {
  ENGRAM_CHECK(batch >= 1, "make_pointer_batch: batch must be >= 1, got {}", batch);
  std::vector<PointerInstance> instances;
  instances.reserve(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    instances.push_back(make_pointer_instance(o, seed, first_index + static_cast<uint64_t>(b)));
  }
  return collate_pointer_batch(instances);
}

PointerBatch collate_pointer_batch(std::span<const PointerInstance> instances) {
  ENGRAM_CHECK(!instances.empty(), "collate_pointer_batch: no instances");
  PointerBatch out;
  out.batch = static_cast<int64_t>(instances.size());
  out.dim = instances[0].dim;
  for (const auto& inst : instances) {
    ENGRAM_CHECK(inst.dim == out.dim && inst.dim >= 1 && inst.points.size() % inst.dim == 0,
                 "collate_pointer_batch: instances of dimension {} and {} (or a ragged one)",
                 out.dim, inst.dim);
    out.max_n = std::max(out.max_n, inst.size());
  }
  out.points.assign(static_cast<size_t>(out.batch * out.max_n * out.dim), 0.0f);
  for (int64_t b = 0; b < out.batch; ++b) {
    const auto& inst = instances[b];
    std::copy(inst.points.begin(), inst.points.end(), out.points.begin() + b * out.max_n * out.dim);
    out.n.push_back(static_cast<int>(inst.size()));
    out.targets.push_back(inst.target);
  }
  return out;
}

// ---- files ----

PointerFileOptions pointer_file_options(PointerTask task) {
  return {.dim = pointer_task_dim(task), .closed = task != PointerTask::kSort, .every_point = task != PointerTask::kHull};
}

void check_pointer_coordinate(double v, std::string_view where) {
  ENGRAM_CHECK(std::isfinite(v) && std::isfinite(static_cast<float>(v)), "{}: coordinate {} is not a finite number",
               where, v);
  ENGRAM_CHECK(std::abs(v) <= kMaxPointerCoordinate, "{}: coordinate {} is outside [-{:g}, {:g}]", where, v,
               kMaxPointerCoordinate, kMaxPointerCoordinate);
}

PointerInstance parse_pointer_line(std::string_view line, const PointerFileOptions& o,
                                   std::string_view where) {
  ENGRAM_CHECK(o.dim >= 1, "{}: point dimension must be >= 1, got {}", where, o.dim);
  ENGRAM_CHECK(static_cast<int64_t>(line.size()) <= kMaxPointerLineBytes,
               "{}: line longer than {} bytes", where, kMaxPointerLineBytes);
  PointerInstance inst;
  inst.dim = o.dim;
  size_t pos = 0;
  std::string_view tok = next_token(line, pos);
  ENGRAM_CHECK(!tok.empty(), "{}: empty line", where);
  for (; !tok.empty() && tok != "output"; tok = next_token(line, pos)) {
    float v = 0;
    const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    ENGRAM_CHECK(ec == std::errc() && end == tok.data() + tok.size() && std::isfinite(v),
                 "{}: coordinate '{}' is not a finite number", where, tok);
    check_pointer_coordinate(v, where);
    ENGRAM_CHECK(static_cast<int64_t>(inst.points.size()) < kMaxPointerPoints * o.dim,
                 "{}: more than {} points", where, kMaxPointerPoints);
    inst.points.push_back(v);
  }
  ENGRAM_CHECK(!tok.empty(), "{}: no 'output' token", where);
  ENGRAM_CHECK(!inst.points.empty(), "{}: no coordinates before 'output'", where);
  ENGRAM_CHECK(inst.points.size() % o.dim == 0,
               "{}: {} coordinates is not a multiple of the point dimension {}", where,
               inst.points.size(), o.dim);
  const int64_t n = inst.size();
  for (tok = next_token(line, pos); !tok.empty(); tok = next_token(line, pos)) {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    ENGRAM_CHECK(ec == std::errc() && end == tok.data() + tok.size(),
                 "{}: index '{}' is not an integer", where, tok);
    ENGRAM_CHECK(v >= 1 && v <= n, "{}: index {} out of range 1..{}", where, v, n);
    ENGRAM_CHECK(static_cast<int64_t>(inst.target.size()) <= n, "{}: more than {} indices", where,
                 n + 1);
    inst.target.push_back(static_cast<int>(v - 1));
  }
  ENGRAM_CHECK(!inst.target.empty(), "{}: no index after 'output'", where);
  if (o.closed && inst.target.size() >= 2 && inst.target.back() == inst.target.front()) {
    inst.target.pop_back();
  }
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (const int i : inst.target) {
    ENGRAM_CHECK(!seen[i], "{}: index {} repeated", where, i + 1);
    seen[i] = 1;
  }
  ENGRAM_CHECK(!o.every_point || static_cast<int64_t>(inst.target.size()) == n,
               "{}: the output names {} of the {} points; it must name every point once{}", where, inst.target.size(),
               n, o.closed ? " (a full tour)" : "");
  // A sorting's output (one-dimensional points, every one named) lists them in ascending order.
  if (o.every_point && o.dim == 1)
    for (size_t k = 1; k < inst.target.size(); ++k)
      ENGRAM_CHECK(inst.points[inst.target[k - 1]] <= inst.points[inst.target[k]],
                   "{}: the output is not in ascending order (index {} = {} before index {} = {})", where,
                   inst.target[k - 1] + 1, inst.points[inst.target[k - 1]], inst.target[k] + 1,
                   inst.points[inst.target[k]]);
  return inst;
}

std::string format_pointer_line(const PointerInstance& inst, const PointerFileOptions& o) {
  ENGRAM_CHECK(inst.dim == o.dim && !inst.points.empty() && inst.points.size() % o.dim == 0,
               "format_pointer_line: instance of dimension {} with {} coordinates, file "
               "dimension {}",
               inst.dim, inst.points.size(), o.dim);
  const int64_t n = inst.size();
  std::string s;
  for (const float v : inst.points) fmt::format_to(std::back_inserter(s), "{} ", v);
  s += "output";
  for (const int i : inst.target) {
    ENGRAM_CHECK(i >= 0 && i < n, "format_pointer_line: index {} out of range 0..{}", i, n - 1);
    fmt::format_to(std::back_inserter(s), " {}", i + 1);
  }
  if (o.closed && !inst.target.empty()) {
    fmt::format_to(std::back_inserter(s), " {}", inst.target[0] + 1);
  }
  return s;
}

void for_each_pointer_line(const std::string& path, const PointerFileOptions& o,
                           const std::function<bool(PointerInstance&&)>& fn) {
  std::ifstream in(path, std::ios::binary);
  ENGRAM_CHECK(in.good(), "{}: cannot open for reading", path);
  std::streambuf* sb = in.rdbuf();
  std::string line;
  int64_t line_no = 0;
  bool done = false;
  while (!done) {
    line.clear();
    int c;
    while ((c = sb->sbumpc()) != std::char_traits<char>::eof() && c != '\n') {
      ENGRAM_CHECK(static_cast<int64_t>(line.size()) <= kMaxPointerLineBytes,
                   "{}:{}: line longer than {} bytes", path, line_no + 1, kMaxPointerLineBytes);
      line.push_back(static_cast<char>(c));
    }
    done = c == std::char_traits<char>::eof();
    if (done && line.empty()) break;  // a final '\n' does not start a line
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!fn(parse_pointer_line(line, o, fmt::format("{}:{}", path, line_no)))) break;
  }
}

std::vector<PointerInstance> read_pointer_file(const std::string& path, const PointerFileOptions& o,
                                               int64_t max_instances) {
  std::vector<PointerInstance> out;
  if (max_instances == 0) return out;
  for_each_pointer_line(path, o, [&](PointerInstance&& inst) {
    out.push_back(std::move(inst));
    return max_instances < 0 || static_cast<int64_t>(out.size()) < max_instances;
  });
  return out;
}

void write_pointer_file(const std::string& path, std::span<const PointerInstance> instances,
                        const PointerFileOptions& o) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  ENGRAM_CHECK(out.good(), "{}: cannot open for writing", path);
  for (const auto& inst : instances) out << format_pointer_line(inst, o) << '\n';
  out.flush();
  ENGRAM_CHECK(out.good(), "{}: write error", path);
}

}  // namespace engram::data::tasks
