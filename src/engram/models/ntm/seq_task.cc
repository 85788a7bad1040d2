// NTM tasks: batch generation with the paper's settings, the bits-per-sequence cost and the
// fixed-length evaluation used by `engram ntm eval`.
// Dims: T steps, B batch, I input channels, K output channels, R scored rows.
#include "engram/models/ntm/seq_task.h"

#include <algorithm>
#include <cmath>

#include "engram/core/ops.h"
#include "engram/models/ntm/ensemble.h"

namespace engram::models {

namespace tasks = engram::data::tasks;

NtmTaskConfig default_task_config(NtmTaskKind kind) {
  NtmTaskConfig c;
  c.task = kind;
  switch (kind) {
    case NtmTaskKind::kCopy:
      c.bits = 8, c.min_len = 1, c.max_len = 20;
      break;
    case NtmTaskKind::kRepeatCopy:
      c.bits = 8, c.min_len = 1, c.max_len = 10, c.min_repeat = 1, c.max_repeat = 10;
      break;
    case NtmTaskKind::kRecall:
      c.bits = 6, c.min_len = 2, c.max_len = 6, c.item_len = 3;
      break;
  }
  return c;
}

NtmTaskKind parse_task_kind(const std::string& name) {
  for (const auto& [kind, n] : io::EnumNames<NtmTaskKind>::items)
    if (name == n) return kind;
  throw Error(fmt::format("unknown NTM task '{}' (copy|repeat-copy|recall)", name));
}

const char* task_name(NtmTaskKind kind) {
  for (const auto& [k, n] : io::EnumNames<NtmTaskKind>::items)
    if (k == kind) return n;
  return "?";
}

int task_input_size(const NtmTaskConfig& cfg) { return cfg.bits + (cfg.task == NtmTaskKind::kCopy ? 1 : 2); }
int task_output_size(const NtmTaskConfig& cfg) { return cfg.bits + (cfg.task == NtmTaskKind::kRepeatCopy ? 1 : 0); }

tasks::SeqBatch make_task_batch(const NtmTaskConfig& cfg, int64_t batch, core::Rng& rng) {
  switch (cfg.task) {
    case NtmTaskKind::kCopy:
      return tasks::make_copy_batch({.bits = cfg.bits, .min_len = cfg.min_len, .max_len = cfg.max_len}, batch, rng);
    case NtmTaskKind::kRepeatCopy:
      return tasks::make_repeat_copy_batch({.bits = cfg.bits, .min_len = cfg.min_len, .max_len = cfg.max_len,
                                            .min_repeat = cfg.min_repeat, .max_repeat = cfg.max_repeat},
                                           batch, rng);
    case NtmTaskKind::kRecall:
      return tasks::make_recall_batch(
          {.bits = cfg.bits, .item_len = cfg.item_len, .min_items = cfg.min_len, .max_items = cfg.max_len}, batch, rng);
  }
  throw Error("make_task_batch: unknown task");
}

void check_task_repeat(const NtmTaskConfig& cfg, int repeat) {
  ENGRAM_CHECK(cfg.task == NtmTaskKind::kRepeatCopy || repeat == 1,
               "repeat {}: a {} model does not repeat (only repeat-copy models take a repeat count)", repeat,
               task_name(cfg.task));
}

tasks::SeqBatch make_task_batch_at(const NtmTaskConfig& cfg, int length, int repeat, int64_t batch,
                                   core::Rng& rng) {
  NtmTaskConfig at = cfg;
  at.min_len = at.max_len = length;
  if (cfg.task != NtmTaskKind::kRepeatCopy) return make_task_batch(at, batch, rng);
  ENGRAM_CHECK(repeat >= 1, "repeat copy: repeat count {} must be >= 1", repeat);
  at.min_repeat = at.max_repeat = repeat;
  tasks::SeqBatch s = make_task_batch(at, batch, rng);
  // The generator normalises the count over its own (here one-value) range: restore the training one.
  const float count = tasks::normalised_repeat(
      repeat, {.bits = cfg.bits, .min_repeat = cfg.min_repeat, .max_repeat = cfg.max_repeat});
  for (int64_t b = 0; b < batch; ++b) s.input[(length * batch + b) * s.in_width + cfg.bits + 1] = count;
  return s;
}

SeqLoss sequence_loss(Graph& g, const SeqModel& model, const tasks::SeqBatch& batch, SeqTrace* trace) {
  ENGRAM_CHECK(batch.in_width == model.input_size() && batch.out_width == model.output_size(),
               "model has {} inputs / {} outputs, the task batch {} / {}", model.input_size(), model.output_size(),
               batch.in_width, batch.out_width);
  const int64_t rows_total = batch.steps * batch.batch;
  const int k = static_cast<int>(batch.out_width);
  SeqLoss out;
  for (int64_t r = 0; r < rows_total; ++r)
    if (batch.mask[r] != 0.0f) out.rows.push_back(static_cast<int32_t>(r));
  ENGRAM_CHECK(!out.rows.empty(), "sequence_loss: the batch has no scored step");
  const int64_t n_rows = static_cast<int64_t>(out.rows.size());
  Var x = g.input({const_cast<float*>(batch.input.data()),
                   {static_cast<int>(batch.steps), static_cast<int>(batch.batch), static_cast<int>(batch.in_width)}});
  SeqOutput y = model.forward(g, x, out.rows, trace);
  if (y.non_finite) {
    out.non_finite = y.non_finite;
    out.bits = out.bit_errors = std::nan("");
    return out;
  }
  std::vector<float> target(n_rows * k);  // [R, K]
  for (int64_t i = 0; i < n_rows; ++i)
    for (int j = 0; j < k; ++j) target[i * k + j] = batch.target[out.rows[i] * k + j];
  // bce_with_logits is a mean over R*K elements: scale to a sum per sequence.
  const float per_seq = static_cast<float>(n_rows * k) / static_cast<float>(batch.batch);
  out.loss = core::scale(core::bce_with_logits(y.logits, target.data()), per_seq);
  out.bits = out.loss.data()[0] / std::log(2.0);
  out.logits = y.logits;
  out.probs.resize(n_rows * k);
  int64_t wrong = 0;
  const float* lg = y.logits.data();
  for (int64_t i = 0; i < n_rows * k; ++i) {
    out.probs[i] = 1.0f / (1.0f + std::exp(-lg[i]));
    wrong += (lg[i] > 0.0f) != (target[i] > 0.5f);
  }
  out.bit_errors = static_cast<double>(wrong) / static_cast<double>(batch.batch);
  return out;
}

SequenceCosts sequence_costs(const SeqLoss& l, const tasks::SeqBatch& batch) {
  ENGRAM_CHECK(!l.non_finite && l.logits.valid(), "sequence_costs: the loss is not finite");
  const int64_t k = batch.out_width;
  SequenceCosts c;
  c.bits.assign(batch.batch, 0.0);
  c.bit_errors.assign(batch.batch, 0.0);
  const float* lg = l.logits.data();
  for (size_t i = 0; i < l.rows.size(); ++i) {
    const int64_t seq = l.rows[i] % batch.batch;
    for (int64_t j = 0; j < k; ++j) {
      // BCE of logit x, target y: max(x, 0) − x·y + log(1 + e^−|x|), in bits.
      const double x = lg[static_cast<int64_t>(i) * k + j], y = batch.target[l.rows[i] * k + j];
      c.bits[seq] += (std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::abs(x)))) / std::log(2.0);
      c.bit_errors[seq] += (x > 0.0) != (y > 0.5);
    }
  }
  return c;
}

EvalResult evaluate_at(const ModelSet<SeqModel>& models, const NtmTaskConfig& cfg, int length, int repeat,
                       int64_t sequences, int64_t batch, uint64_t seed) {
  ENGRAM_CHECK(sequences >= 1 && batch >= 1, "evaluate: sequences {} and batch {} must be >= 1", sequences, batch);
  EvalResult res;
  res.length = length;
  res.repeat = repeat;
  core::Rng rng(seed);
  Graph g(false, size_t{1} << 24);
  double bits = 0, errors = 0, marker = 0, copy = 0, exact = 0;
  const int64_t marker_channel = cfg.task == NtmTaskKind::kRepeatCopy ? cfg.bits : -1;
  for (int64_t done = 0; done < sequences;) {
    const int64_t b = std::min(batch, sequences - done);
    g.reset();
    tasks::SeqBatch s = make_task_batch_at(cfg, length, repeat, b, rng);
    SeqLoss l = sequence_loss_of(g, models, s);
    done += b;
    if (l.non_finite) {
      ++res.non_finite;
      continue;
    }
    bits += l.bits * b;
    errors += l.bit_errors * b;
    res.sequences += b;
    // Split the wrong bits by kind and sequence (row t * b + j holds sequence j).
    const int64_t k = s.out_width;
    std::vector<int64_t> copy_wrong(static_cast<size_t>(b), 0);
    for (size_t i = 0; i < l.rows.size(); ++i) {
      const int64_t row = l.rows[i];
      const float* p = l.probs.data() + i * k;
      const float* t = s.target.data() + row * k;
      const bool fired = marker_channel >= 0 && p[marker_channel] > 0.5f;
      for (int64_t c = 0; c < k; ++c) {
        if ((p[c] > 0.5f) == (t[c] > 0.5f)) continue;
        if (c == marker_channel) ++marker;
        else if (!fired) ++copy_wrong[static_cast<size_t>(row % b)];
      }
    }
    for (int64_t w : copy_wrong) {
      copy += static_cast<double>(w);
      exact += w == 0 ? 1 : 0;
    }
  }
  res.bits = res.sequences ? bits / res.sequences : std::nan("");
  res.bit_errors = res.sequences ? errors / res.sequences : std::nan("");
  res.marker_errors = res.sequences ? marker / res.sequences : std::nan("");
  res.copy_errors = res.sequences ? copy / res.sequences : std::nan("");
  res.exact = res.sequences ? exact / res.sequences : std::nan("");
  return res;
}

}  // namespace engram::models
