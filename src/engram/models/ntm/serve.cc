// The NTM route of the server over the inference contract (inference.h): one generated sequence of
// the model's task per request, with the model's outputs and every head's weighting over time,
// the write heads' add vectors and the read heads' read vectors (Graves et al. 2014, figure 6).
#include <algorithm>
#include <numeric>

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

// Rows [T][cols] of sequence b in a [T, B, cols] buffer.
json rows(const std::vector<float>& v, int64_t steps, int64_t batch, int64_t b, int64_t cols) {
  json out = json::array();
  for (int64_t t = 0; t < steps; ++t) {
    const auto begin = v.begin() + (t * batch + b) * cols;
    out.push_back(std::vector<float>(begin, begin + cols));
  }
  return out;
}

// [heads][T][cols] of sequence b from a trace's [T, heads, B, cols] (weightings: cols = N slots;
// vectors: M), over the sequence's own T steps.
json heads(const std::vector<float>& w, int steps, int n_heads, int batch, int b, int cols) {
  json out = json::array();
  for (int h = 0; h < n_heads; ++h) {
    json one = json::array();
    for (int t = 0; t < steps; ++t) {
      const float* row = SeqTrace::row(w, t, n_heads, h, batch, b, cols);
      one.push_back(std::vector<float>(row, row + cols));
    }
    out.push_back(std::move(one));
  }
  return out;
}

// Sequences [B] of one task (each generated alone, B = 1) as one batch [T = max T_b, B, ...]: each
// sequence from step 0, zero input and mask after its end. The model is causal and its rows are
// independent, so a sequence's outputs over its own steps are those it has alone.
data::tasks::SeqBatch stack(const std::vector<const data::tasks::SeqBatch*>& seqs) {
  data::tasks::SeqBatch out;
  out.batch = static_cast<int64_t>(seqs.size());
  out.in_width = seqs.front()->in_width, out.out_width = seqs.front()->out_width;
  for (const data::tasks::SeqBatch* s : seqs) out.steps = std::max(out.steps, s->steps);
  out.input.assign(out.steps * out.batch * out.in_width, 0.0f);
  out.target.assign(out.steps * out.batch * out.out_width, 0.0f);
  out.mask.assign(out.steps * out.batch, 0.0f);
  for (int64_t b = 0; b < out.batch; ++b) {
    const data::tasks::SeqBatch& s = *seqs[b];
    for (int64_t t = 0; t < s.steps; ++t) {
      std::copy_n(s.input.begin() + t * s.in_width, s.in_width, out.input.begin() + (t * out.batch + b) * out.in_width);
      std::copy_n(s.target.begin() + t * s.out_width, s.out_width,
                  out.target.begin() + (t * out.batch + b) * out.out_width);
      out.mask[t * out.batch + b] = s.mask[t];
    }
  }
  return out;
}

// The replies of sequences [B], run as one batch; `traces`: with the heads' weightings and vectors.
std::vector<json> run_batch(const ModelSet<SeqModel>& models, const std::vector<const data::tasks::SeqBatch*>& seqs,
                            bool traces) {
  const data::tasks::SeqBatch b = stack(seqs);
  core::Graph g(false, size_t{1} << 24);
  SeqTrace trace;
  const SeqLoss l = sequence_loss_of(g, models, b, traces ? &trace : nullptr);
  ENGRAM_CHECK(!l.non_finite, "ntm: non-finite {} weighting at step {}", l.non_finite ? l.non_finite->head : "",
               l.non_finite ? l.non_finite->step : 0);
  const int64_t k = b.out_width, n = b.batch;
  const SequenceCosts costs = sequence_costs(l, b);
  std::vector<float> outputs(static_cast<size_t>(b.steps * n * k), 0.0f);  // [T, B, K], 0 where not scored
  for (size_t i = 0; i < l.rows.size(); ++i)
    std::copy(l.probs.begin() + i * k, l.probs.begin() + (i + 1) * k, outputs.begin() + l.rows[i] * k);
  std::vector<json> out;
  for (int64_t s = 0; s < n; ++s) {
    const int steps = static_cast<int>(seqs[s]->steps);
    const int batch = static_cast<int>(n), row = static_cast<int>(s);
    json r = {{"input", rows(b.input, steps, n, s, b.in_width)},
              {"target", rows(b.target, steps, n, s, k)},
              {"output", rows(outputs, steps, n, s, k)},
              {"scored", seqs[s]->mask},
              {"bits", costs.bits[s]},
              {"bit_errors", costs.bit_errors[s]}};
    if (traces) {
      r["write_weightings"] = heads(trace.write_w, steps, trace.write_heads, batch, row, trace.slots);
      r["read_weightings"] = heads(trace.read_w, steps, trace.read_heads, batch, row, trace.slots);
      r["add_vectors"] = heads(trace.adds, steps, trace.write_heads, batch, row, trace.width);
      r["read_vectors"] = heads(trace.reads, steps, trace.read_heads, batch, row, trace.width);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

const InferenceSpec& LoadedNtmModel::inference() const {
  // alignments (default on): the heads' weightings and vectors over time in the reply.
  static const InferenceSpec spec{{"length", "repeat", "seed"},
                                  {{"batch", "precision", "alignments"}, decode::DecodeOptions{.alignments = true}}};
  return spec;
}

std::unique_ptr<Request> LoadedNtmModel::parse_request(const json& body, const ServeLimits& limits) const {
  return models::parse_request<NtmRequest>(body, inference(), family(), limits, [&](const json& r) {
    return std::vector<NtmRequest>{read_request(r, model->model_config().task, limits.max_length)};
  });
}

// The sequences of a group run in batches of up to `batch` of similar lengths, sorted by length;
// a batch that meets a non-finite weighting runs its sequences alone, so only that request fails.
std::vector<json> LoadedNtmModel::run_requests(std::span<const Request* const> requests) const {
  const NtmTaskConfig& task = model->model_config().task;
  auto run = [&](std::span<const NtmRequest* const> inputs, const decode::DecodeOptions& o) {
    std::vector<data::tasks::SeqBatch> seqs;  // [G], each B = 1 from its own seed
    for (const NtmRequest* q : inputs) {
      core::Rng rng(static_cast<uint64_t>(q->seed));
      seqs.push_back(make_task_batch_at(task, q->length, q->repeat, 1, rng));
    }
    std::vector<size_t> order(seqs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return seqs[a].steps < seqs[b].steps; });
    std::vector<json> out(seqs.size());
    const size_t chunk = static_cast<size_t>(std::max(1, o.batch));
    for (size_t first = 0, end = 0; first < order.size(); first = end) {
      // A batch costs its longest sequence's steps in every row: it ends where a sequence is more
      // than 5/4 of its shortest's length (at most 25% padding) or at `batch` sequences.
      end = first + 1;
      while (end < order.size() && end - first < chunk && 4 * seqs[order[end]].steps <= 5 * seqs[order[first]].steps)
        ++end;
      const std::span<const size_t> part(order.data() + first, end - first);
      std::vector<const data::tasks::SeqBatch*> batch;
      for (size_t i : part) batch.push_back(&seqs[i]);
      std::vector<json> replies;
      try {
        replies = run_batch(models(), batch, o.alignments);
      } catch (const Error&) {
        if (part.size() == 1) throw;
        for (const data::tasks::SeqBatch* s : batch) replies.push_back(run_batch(models(), {s}, o.alignments).front());
      }
      for (size_t j = 0; j < part.size(); ++j) out[part[j]] = std::move(replies[j]);
    }
    return out;
  };
  return models::run_requests<NtmRequest>(requests, run, single_reply);
}

}  // namespace engram::models
