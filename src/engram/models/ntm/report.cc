// `engram ntm eval` / `show` as text and SVG: the cost table over lengths, and one run's panels.
// Dims: T steps, K output bits, N memory slots.
#include "engram/models/ntm/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "engram/core/error.h"
#include "engram/eval/report.h"
#include "engram/models/ntm/ensemble.h"
#include "engram/viz/memory.h"

namespace engram::models {

void ntm_eval_report(const LoadedNtmModel& loaded, const NtmEvalOptions& o,
                     const std::function<void(const std::string&)>& emit) {
  const NtmTaskModel& model = *loaded.model;
  const NtmTaskConfig& task = model.model_config().task;
  const bool repeat_task = task.task == NtmTaskKind::kRepeatCopy;
  const std::vector<int>& lengths = o.lengths;
  const std::vector<int> repeats = o.repeats.empty() ? std::vector<int>{repeat_task ? task.max_repeat : 1} : o.repeats;
  ENGRAM_CHECK(!lengths.empty(), "ntm eval: no lengths given");
  for (int r : repeats) check_task_repeat(task, r);
  ENGRAM_CHECK(repeats.size() == 1 || lengths.size() == 1 || repeats.size() == lengths.size(),
               "--repeats has {} values for {} lengths (give one, or one per length)", repeats.size(), lengths.size());
  const size_t rows = std::max(lengths.size(), repeats.size());
  const bool lstm = model.model_config().architecture == NtmArchitecture::kLstm;
  const bool recall = task.task == NtmTaskKind::kRecall;
  std::string how;  // what else runs: ensemble members, bf16 / int8 weights
  if (loaded.setup.members() > 0)
    how += fmt::format(" with {} ensemble member{}", loaded.setup.members(), loaded.setup.members() > 1 ? "s" : "");
  if (loaded.setup.precision() != decode::Precision::kFp32)
    how += fmt::format(", {} weights", decode::precision_name(loaded.setup.precision()));
  std::string head = fmt::format("{} ({}){} on {}, trained on {} {}-{}{}; {} sequences per row, seed {}\n\n",
                                 lstm ? "LSTM baseline" : "NTM", loaded.dir().string(), how, task_name(task.task),
                                 recall ? "items" : "lengths", task.min_len, task.max_len,
                                 repeat_task ? fmt::format(", repeats {}-{}", task.min_repeat, task.max_repeat) : "",
                                 o.sequences, o.seed);
  const char* what = recall ? "items" : "length";
  // Repeat copy separates the count (the end marker) from the copying (the data bits where the
  // model does not output the end marker); see models::EvalResult.
  head += repeat_task ? eval::markdown_head({what, "repeats", "cost (bits/seq)", "wrong bits/seq", "wrong end markers/seq",
                                             "wrong copy bits/seq", "sequences copied exactly"})
                      : eval::markdown_head({what, "cost (bits/seq)", "wrong bits/seq", "sequences exactly right"});
  emit(head);
  for (size_t i = 0; i < rows; ++i) {
    const int len = lengths[lengths.size() == 1 ? 0 : i], rep = repeats[repeats.size() == 1 ? 0 : i];
    const EvalResult r = evaluate_at(loaded.models(), task, len, rep, o.sequences, o.batch, o.seed);
    const std::string skipped = r.non_finite ? fmt::format(" ({} batches non-finite, skipped)", r.non_finite) : "";
    if (repeat_task)
      emit(fmt::format("| {} | {} | {:.4g} | {:.3g} | {:.3g} | {:.3g} | {:.1f}% |{}\n", len, rep, r.bits, r.bit_errors,
                       r.marker_errors, r.copy_errors, 100.0 * r.exact, skipped));
    else emit(fmt::format("| {} | {:.4g} | {:.3g} | {:.1f}% |{}\n", len, r.bits, r.bit_errors, 100.0 * r.exact, skipped));
  }
}

NtmShow show_ntm(const LoadedNtmModel& loaded, int length, int repeat_arg, uint64_t seed) {
  const NtmTaskModel& model = *loaded.model;
  const NtmTaskConfig& task = model.model_config().task;
  core::Rng rng(seed);
  if (repeat_arg > 0) check_task_repeat(task, repeat_arg);
  const int repeat = repeat_arg > 0 ? repeat_arg : task.task == NtmTaskKind::kRepeatCopy ? task.max_repeat : 1;
  const data::tasks::SeqBatch b = make_task_batch_at(task, length, repeat, 1, rng);
  core::Graph g(false, size_t{1} << 24);
  SeqTrace trace;
  const SeqLoss l = sequence_loss_of(g, loaded.models(), b, &trace);
  ENGRAM_CHECK(!l.non_finite, "ntm show: non-finite {} weighting at step {}", l.non_finite ? l.non_finite->head : "",
               l.non_finite ? l.non_finite->step : 0);
  const int steps = static_cast<int>(b.steps), k = static_cast<int>(b.out_width);
  std::vector<float> outputs(static_cast<size_t>(steps) * k, 0.0f);  // [T, K], 0 where not scored
  for (size_t i = 0; i < l.rows.size(); ++i)
    std::copy(l.probs.begin() + i * k, l.probs.begin() + (i + 1) * k, outputs.begin() + static_cast<int64_t>(l.rows[i]) * k);
  std::vector<viz::TimePanel> panels = {
      {"inputs", b.input, steps, static_cast<int>(b.in_width)},
      {"targets", b.target, steps, k},
      {"outputs", outputs, steps, k},
  };
  // One panel per head: [T, N] from the trace's [T, heads, B = 1, N].
  auto head_panel = [&](const std::vector<float>& w, int heads, int h, const std::string& name) {
    std::vector<float> v;
    for (int t = 0; t < steps; ++t) {
      const float* row = SeqTrace::row(w, t, heads, h, 1, 0, trace.slots);
      v.insert(v.end(), row, row + trace.slots);
    }
    panels.push_back({heads == 1 ? name : fmt::format("{} {}", name, h), std::move(v), steps, trace.slots});
  };
  for (int h = 0; h < trace.write_heads; ++h) head_panel(trace.write_w, trace.write_heads, h, "write weighting");
  for (int h = 0; h < trace.read_heads; ++h) head_panel(trace.read_w, trace.read_heads, h, "read weighting");
  NtmShow s;
  s.svg = viz::memory_svg(panels);
  s.summary = fmt::format("{}, {} {}{}: cost {:.3f} bits, {:.0f} wrong bits", loaded.dir().string(),
                          task.task == NtmTaskKind::kRecall ? "items" : "length", length,
                          task.task == NtmTaskKind::kRepeatCopy ? fmt::format(" x {} repeats", repeat) : "", l.bits,
                          l.bit_errors);
  return s;
}

}  // namespace engram::models
