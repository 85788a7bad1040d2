// Fuzz harness: pointer-network instance files (data/tasks/pointer_tasks.h). Each input line goes
// through parse_pointer_line as a sorting line (d 1, open), a hull/TSP line (d 2, closed) and a
// d 2 open line; the whole input through read_pointer_file, which must agree with the lines.
// Every parsed instance must satisfy the format's promises (finite coordinates, n <= the limit,
// distinct 0-based indices < n), survive format_pointer_line -> parse_pointer_line bit for bit,
// and feed the label and geometry code (sort_target, convex_hull, polygon checks, small TSP, which
// must refuse coordinates beyond kTspMaxCoordinate).
#include <cmath>
#include <cstring>

#include "engram/data/tasks/pointer_tasks.h"
#include "engram/data/tasks/tsp.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "pointer";
using namespace engram::data::tasks;

bool same_instance(const PointerInstance& a, const PointerInstance& b) {
  return a.dim == b.dim && a.target == b.target && a.points.size() == b.points.size() &&
         (a.points.empty() || std::memcmp(a.points.data(), b.points.data(), 4 * a.points.size()) == 0);
}

void check_instance(const PointerInstance& inst, const PointerFileOptions& o) {
  const int64_t n = inst.size();
  FUZZ_CHECK(kHarness, inst.dim == o.dim && n >= 1 && n <= kMaxPointerPoints &&
                           inst.points.size() == static_cast<size_t>(n * o.dim),
             "instance of dim {} with {} coordinates", inst.dim, inst.points.size());
  for (float v : inst.points) FUZZ_CHECK(kHarness, std::isfinite(v), "non-finite coordinate {}", v);
  FUZZ_CHECK(kHarness, !inst.target.empty() && static_cast<int64_t>(inst.target.size()) <= n, "{} indices for {} points",
             inst.target.size(), n);
  std::vector<char> seen(static_cast<size_t>(n), 0);
  for (int i : inst.target) {
    FUZZ_CHECK(kHarness, i >= 0 && i < n && !seen[static_cast<size_t>(i)], "bad or repeated index {} of {}", i, n);
    seen[static_cast<size_t>(i)] = 1;
  }
  const std::string line = format_pointer_line(inst, o);
  PointerInstance back;
  try {
    back = parse_pointer_line(line, o, "format_pointer_line");
  } catch (const engram::Error& e) {
    engram::fuzz::finding(kHarness, fmt::format("format_pointer_line output does not parse: {}", e.what()));
  }
  FUZZ_CHECK(kHarness, same_instance(inst, back), "format -> parse changed the instance: {}", line);

  const std::span<const float> pts(inst.points);
  if (o.dim == 1) {
    std::vector<int> order = sort_target(pts);
    FUZZ_CHECK(kHarness, static_cast<int64_t>(order.size()) == n, "sort_target: {} of {}", order.size(), n);
    for (size_t k = 1; k < order.size(); ++k)
      FUZZ_CHECK(kHarness, pts[order[k - 1]] <= pts[order[k]], "sort_target out of order");
    return;
  }
  if (o.dim != 2 || n > 2000) return;
  const std::vector<int> hull = convex_hull(pts);
  std::vector<char> on_hull(static_cast<size_t>(n), 0);
  for (int i : hull) {
    FUZZ_CHECK(kHarness, i >= 0 && i < n && !on_hull[static_cast<size_t>(i)], "convex_hull: bad index {}", i);
    on_hull[static_cast<size_t>(i)] = 1;
  }
  FUZZ_CHECK(kHarness, !hull.empty(), "convex_hull of {} points is empty", n);
  if (n <= 200) {
    (void)polygon_area(pts, inst.target);
    (void)is_simple_polygon(pts, inst.target);
    (void)hull_area_coverage(pts, inst.target, hull);
    (void)same_cycle(inst.target, hull);
  }
  if (n <= 8) {
    PointerTaskOptions tsp;
    tsp.task = PointerTask::kTsp;
    bool in_range = true;  // the solvers refuse larger coordinates (tsp.h)
    for (float v : pts) in_range = in_range && std::abs(static_cast<double>(v)) <= kTspMaxCoordinate;
    if (in_range) {
      const std::vector<int> tour = pointer_label(tsp, pts);
      FUZZ_CHECK(kHarness, static_cast<int64_t>(tour.size()) == n, "TSP tour of {} for {} points", tour.size(), n);
    } else {
      bool refused = false;
      try {
        (void)pointer_label(tsp, pts);
      } catch (const engram::Error&) {
        refused = true;
      }
      FUZZ_CHECK(kHarness, refused, "a TSP label for coordinates beyond {:g}", kTspMaxCoordinate);
    }
  }
}

void run(std::string_view bytes) {
  const PointerFileOptions kinds[] = {{1, false}, {2, true}, {2, false}};
  std::vector<std::vector<std::optional<PointerInstance>>> lines(3);
  size_t pos = 0;
  int64_t line_no = 0;
  while (pos < bytes.size() && line_no < 1000) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    for (int k = 0; k < 3; ++k) {
      lines[k].emplace_back();
      engram::fuzz::guard(kHarness, [&] {
        PointerInstance inst = parse_pointer_line(line, kinds[k], "fuzz");
        check_instance(inst, kinds[k]);
        lines[k].back() = std::move(inst);
      });
    }
    pos = end + 1;
  }
  if (line_no >= 1000) return;

  const auto path = engram::fuzz::temp_file("instances.txt", bytes);
  for (int k = 0; k < 3; ++k)
    engram::fuzz::guard(kHarness, [&] {
      bool failed = true;
      std::vector<PointerInstance> file;
      try {
        file = read_pointer_file(path.string(), kinds[k]);
        failed = false;
      } catch (const engram::Error&) {
      }
      bool every_line = true;
      for (const auto& l : lines[k]) every_line = every_line && l.has_value();
      FUZZ_CHECK(kHarness, failed != every_line, "read_pointer_file {} where every line {}",
                 failed ? "fails" : "succeeds", every_line ? "parses" : "does not");
      if (failed) return;
      FUZZ_CHECK(kHarness, file.size() == lines[k].size(), "read_pointer_file: {} instances for {} lines", file.size(),
                 lines[k].size());
      for (size_t i = 0; i < file.size(); ++i)
        FUZZ_CHECK(kHarness, same_instance(file[i], *lines[k][i]), "read_pointer_file line {} differs", i + 1);
      if (!file.empty()) (void)collate_pointer_batch(file);
    });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
