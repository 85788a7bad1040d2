// The NTM route of the server over the inference contract (inference.h): one generated sequence of
// the model's task per request, with the model's outputs and every head's weighting over time,
// the write heads' add vectors and the read heads' read vectors (Graves et al. 2014, figure 6).
#include "engram/core/graph.h"
#include "engram/models/ntm/ensemble.h"
#include "engram/models/ntm/model.h"
#include "engram/models/ntm/seq_task.h"
#include "engram/models/serve_json.h"

namespace engram::models {

namespace {

using nlohmann::json;

struct NtmRequest {
  int length = 0, repeat = 1;
  int64_t seed = 1;
};

NtmRequest read_request(const json& r, const NtmTaskConfig& task, int max_length) {
  NtmRequest q;
  q.length = serve_json::int_field(r, "length", 0, 1, max_length);
  ENGRAM_CHECK(serve_json::find(r, "length"), "the request needs 'length' (1 to {})", max_length);
  q.repeat = serve_json::int_field(r, "repeat", task.task == NtmTaskKind::kRepeatCopy ? task.max_repeat : 1, 1, 100);
  check_task_repeat(task, q.repeat);
  q.seed = serve_json::int_field(r, "seed", 1, 0, 1 << 30);
  return q;
}

// Rows [T][cols] of a [T, B = 1, cols] buffer.
json rows(const std::vector<float>& v, int64_t steps, int64_t cols) {
  json out = json::array();
  for (int64_t t = 0; t < steps; ++t) out.push_back(std::vector<float>(v.begin() + t * cols, v.begin() + (t + 1) * cols));
  return out;
}

// [heads][T][cols] from a trace's [T, heads, cols] (weightings: cols = N slots; vectors: M).
json heads(const std::vector<float>& w, int steps, int n_heads, int slots) {
  json out = json::array();
  for (int h = 0; h < n_heads; ++h) {
    json one = json::array();
    for (int t = 0; t < steps; ++t) {
      const auto begin = w.begin() + (static_cast<int64_t>(t) * n_heads + h) * slots;
      one.push_back(std::vector<float>(begin, begin + slots));
    }
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

const InferenceSpec& LoadedNtmModel::inference() const {
  static const InferenceSpec spec{{"length", "repeat", "seed"}, {{"batch", "precision"}, {}}};
  return spec;
}

std::unique_ptr<Request> LoadedNtmModel::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<NtmRequest>(body, inference(), family(), limits, [&](const json& r) {
    return std::vector<NtmRequest>{read_request(r, model->model_config().task, limits.max_length)};
  });
}

// Each sequence runs alone: a request's sequence is generated from its own seed and length, and
// the traces read one batch row.
std::vector<json> LoadedNtmModel::run_requests(std::span<const Request* const> requests) const {
  const NtmTaskConfig& task = model->model_config().task;
  auto run = [&](std::span<const NtmRequest* const> inputs, const decode::DecodeOptions&) {
  std::vector<json> out;
  for (const NtmRequest* in : inputs) {
    const NtmRequest& q = *in;
    core::Rng rng(static_cast<uint64_t>(q.seed));
    const data::tasks::SeqBatch b = make_task_batch_at(task, q.length, q.repeat, 1, rng);
    core::Graph g(false, size_t{1} << 24);
    SeqTrace trace;
    const SeqLoss l = sequence_loss_of(g, models(), b, &trace);
    ENGRAM_CHECK(!l.non_finite, "ntm: non-finite {} weighting at step {}", l.non_finite ? l.non_finite->head : "",
                 l.non_finite ? l.non_finite->step : 0);
    const int64_t k = b.out_width;
    std::vector<float> outputs(static_cast<size_t>(b.steps * k), 0.0f);  // [T, K], 0 where not scored
    for (size_t i = 0; i < l.rows.size(); ++i)
      std::copy(l.probs.begin() + i * k, l.probs.begin() + (i + 1) * k, outputs.begin() + l.rows[i] * k);
    const int steps = static_cast<int>(b.steps);
    out.push_back({{"input", rows(b.input, b.steps, b.in_width)},
                   {"target", rows(b.target, b.steps, k)},
                   {"output", rows(outputs, b.steps, k)},
                   {"scored", b.mask},
                   {"bits", l.bits},
                   {"bit_errors", l.bit_errors},
                   {"write_weightings", heads(trace.write_w, steps, trace.write_heads, trace.slots)},
                   {"read_weightings", heads(trace.read_w, steps, trace.read_heads, trace.slots)},
                   {"add_vectors", heads(trace.adds, steps, trace.write_heads, trace.width)},
                   {"read_vectors", heads(trace.reads, steps, trace.read_heads, trace.width)}});
  }
  return out;
  };
  return models::run_requests<NtmRequest>(requests, run, single_reply);
}

}  // namespace engram::models
