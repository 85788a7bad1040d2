// The pointer route of the server (LoadedPointerModel::serve_check / serve): one instance per
// request; the reply carries each output step's distribution over the input points.
#include "engram/models/pointer/eval.h"
#include "engram/models/serve_json.h"

namespace engram::models {

namespace {

using nlohmann::json;
namespace tasks = data::tasks;

// The request's points: numbers for sorting, [x, y] pairs for hull and TSP.
tasks::PointerInstance read_points(const json& r, PointerTask task, int max_points) {
  const json* v = serve_json::find(r, "points");
  ENGRAM_CHECK(v != nullptr, "the request needs 'points'");
  ENGRAM_CHECK(v->is_array() && !v->empty() && v->size() <= static_cast<size_t>(max_points),
               "'points' must be an array of 1 to {} points", max_points);
  tasks::PointerInstance in;
  in.dim = tasks::pointer_task_dim(task);
  // Each coordinate checked as the file reader checks it (tasks::check_pointer_coordinate).
  if (in.dim == 1) {
    for (double x : serve_json::numbers_field(r, "points", max_points)) {
      tasks::check_pointer_coordinate(x, fmt::format("'points'[{}]", in.points.size()));
      in.points.push_back(static_cast<float>(x));
    }
    return in;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const json& p = (*v)[i];
    ENGRAM_CHECK(p.is_array() && p.size() == static_cast<size_t>(in.dim), "'points'[{}] must be [x, y]", i);
    const std::vector<double> xy = serve_json::numbers_field(json{{"point", p}}, "point", in.dim);
    for (double x : xy) {
      tasks::check_pointer_coordinate(x, fmt::format("'points'[{}]", i));
      in.points.push_back(static_cast<float>(x));
    }
  }
  return in;
}

// The request's "views" (hull and TSP; PointerDecodeOptions::views), 1 when absent.
int read_views(const json& r, PointerTask task, int max_views) {
  const int views = serve_json::int_field(r, "views", 1, 1, max_views);
  ENGRAM_CHECK(views == 1 || task != PointerTask::kSort, "'views' are readings of 2-D points (hull, tsp), not of sorting");
  return views;
}

}  // namespace

int LoadedPointerModel::serve_check(const json& r, const ServeLimits& limits) const {
  serve_json::check_object(r);
  read_points(r, model->cfg().task, limits.max_items);
  read_views(r, model->cfg().task, limits.max_beam);
  return 1;
}

std::vector<json> LoadedPointerModel::serve(std::span<const json* const> requests) const {
  const PointerTask task = model->cfg().task;
  const bool closed = tasks::pointer_file_options(task).closed;
  PointerDecodeOptions o;
  o.attention = true;
  o.packed_weights = packed.get();
  std::vector<json> out;
  for (const json* r : requests) {
    const tasks::PointerInstance in = read_points(*r, task, 1 << 30);
    o.views = read_views(*r, task, kMaxPointerViews);  // serve_check held it to --max-beam
    const PointerPrediction p = predict_pointer(*model, std::span(&in, 1), o)[0];
    std::vector<int> output = p.output;
    if (closed && !output.empty()) output.push_back(output.front());
    const size_t n = static_cast<size_t>(in.size());
    json attention = json::array();
    for (size_t row = 0; n > 0 && (row + 1) * n <= p.attention.size(); ++row)
      attention.push_back(std::vector<float>(p.attention.begin() + row * n, p.attention.begin() + (row + 1) * n));
    out.push_back({{"output", output}, {"log_prob", p.log_prob}, {"attention", std::move(attention)}});
  }
  return out;
}

}  // namespace engram::models
