// The pointer route of the server over the inference contract (inference.h): one instance per
// request; instances asking for the same options are decoded as one batch (predict_pointer); the
// reply carries each output step's distribution over the input points.
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

}  // namespace

const InferenceSpec& LoadedPointerModel::inference() const {
  static const InferenceSpec spec{{"points"}, pointer_option_set()};
  return spec;
}

std::unique_ptr<Request> LoadedPointerModel::parse_request(const json& body, const ServeLimits& limits) const {
  const PointerTask task = model->cfg().task;
  std::unique_ptr<Request> r =
      models::parse_request<tasks::PointerInstance>(body, inference(), family(), limits, [&](const json& b) {
        return std::vector<tasks::PointerInstance>{read_points(b, task, limits.max_items)};
      });
  ENGRAM_CHECK(r->options.views == 1 || task != PointerTask::kSort,
               "'views' are readings of 2-D points (hull, tsp), not of sorting");
  return r;
}

std::vector<json> LoadedPointerModel::run_requests(std::span<const Request* const> requests) const {
  const bool closed = tasks::pointer_file_options(model->cfg().task).closed;
  auto run = [&](std::span<const tasks::PointerInstance* const> inputs, const decode::DecodeOptions& options) {
    PointerDecodeOptions o = pointer_decode_options(options);
    o.attention = true;
    o.packed_weights = packed.get();  // read by the few-row products only
    std::vector<tasks::PointerInstance> batch;
    for (const tasks::PointerInstance* in : inputs) batch.push_back(*in);
    const std::vector<PointerPrediction> ps = predict_pointer(models(), batch, o);
    std::vector<json> out;
    for (size_t i = 0; i < batch.size(); ++i) {
      const PointerPrediction& p = ps[i];
      std::vector<int> output = p.output;
      if (closed && !output.empty()) output.push_back(output.front());
      out.push_back({{"output", output},
                     {"log_prob", p.log_prob},
                     {"attention", serve_json::rows(p.attention, static_cast<size_t>(batch[i].size()))}});
    }
    return out;
  };
  return models::run_requests<tasks::PointerInstance>(requests, run, single_reply);
}

}  // namespace engram::models
