// PointerNet: finite-difference checks of the teacher-forced model (every task, with and without
// glimpse and logit clipping, LSTM and GRU), the task rules as masks (greedy and beam never
// return an invalid tour, a repeated index or an unfinished hull), teacher forcing against
// stepping, the checkpoint round trip through the registry, the metrics and the picture, and a
// fixed-seed learnability test (sorting 5 numbers through `engram train`'s family entry).
// Dims: B batch, S positions, V = S + 1 classes, T output steps, H hidden.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <set>

#include "data/test_util.h"
#include "engram/core/grad_check.h"
#include "engram/nn/grad_targets.h"
#include "engram/core/kernels/blas.h"
#include "engram/core/ops.h"
#include "engram/data/tasks/tsp.h"
#include "engram/decode/search.h"
#include "engram/io/checkpoint.h"
#include "engram/models/pointer/eval.h"
#include "engram/models/pointer/show.h"
#include "engram/models/pointer/task.h"
#include "engram/models/registry.h"
#include "viz/xml_check.h"

namespace engram::models {
namespace pointer_test {

namespace tasks = data::tasks;
using core::Graph;
using core::Var;
using data::testing::TempDir;

struct Variant {
  std::string name;
  PointerTask task;
  PointerCell cell = PointerCell::kLstm;
  int glimpses = 0;
  float clip = 0.0f;
};

std::vector<Variant> variants() {
  return {{"sort/lstm", PointerTask::kSort},
          {"hull/lstm/glimpse/clip", PointerTask::kHull, PointerCell::kLstm, 1, 2.0f},
          {"tsp/gru/glimpse", PointerTask::kTsp, PointerCell::kGru, 1},
          {"tsp/lstm/clip", PointerTask::kTsp, PointerCell::kLstm, 0, 3.0f}};
}

PointerConfig tiny_config(const Variant& v, int hidden = 4) {
  PointerConfig c;
  c.task = v.task;
  c.embed_dim = 3;
  c.hidden = hidden;
  c.attn_dim = 3;
  c.glimpses = v.glimpses;
  c.logit_clip = v.clip;
  c.cell = v.cell;
  return c;
}

// Instances of different sizes (padding and per-row masks exercised), with exact labels.
std::vector<tasks::PointerInstance> instances(PointerTask task, std::vector<int> sizes, uint64_t seed = 3) {
  std::vector<tasks::PointerInstance> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    tasks::PointerTaskOptions o{.task = task, .min_n = sizes[i], .max_n = sizes[i]};
    out.push_back(tasks::make_pointer_instance(o, seed, i));
  }
  return out;
}

std::vector<std::vector<int>> targets_of(const std::vector<tasks::PointerInstance>& set) {
  std::vector<std::vector<int>> t;
  for (const auto& in : set) t.push_back(in.target);
  return t;
}

Var flat(Var v) { return core::reshape(v, {static_cast<int>(v.numel())}); }

TEST(PointerGradCheck, TeacherForcedDistributionsAndLossEveryVariant) {
  std::printf("%-28s %12s %8s  %s\n", "pointer variant", "worst err", "checked", "worst element");
  for (const Variant& v : variants()) {
    core::Rng rng(5);
    PointerNet model(tiny_config(v), rng);
    const auto set = instances(v.task, {4, 3});
    const decode::SourceBatch src = pointer_source(set);
    const auto targets = targets_of(set);
    auto f = [&](Graph& g) {
      PointerForward fw = model.forward(g, src, targets);
      // Probabilities (masked classes are exactly 0, so every output is finite) and the NLL.
      return core::concat({flat(core::exp(fw.log_probs)), flat(model.loss(g, src, targets))}, 0);
    };
    const core::GradCheckResult r = core::grad_check(f, nn::grad_targets(model.params()), {.max_elements = 24});
    std::printf("%-28s %12.3e %8lld  %s\n", v.name.c_str(), r.max_error, static_cast<long long>(r.checked),
                r.worst.c_str());
    EXPECT_GT(r.checked, 0) << v.name;
    EXPECT_LE(r.max_error, 1e-2) << v.name << ": " << r.worst;
  }
}

TEST(PointerRules, MasksOfEachTask) {
  std::vector<uint8_t> used(5, 0);
  std::vector<float> m(6);
  // TSP: city 0 first, then the unvisited, end only after all.
  pointer_allowed(PointerTask::kTsp, 4, 5, {}, used.data(), m.data());
  EXPECT_EQ(m, (std::vector<float>{0, 1, 0, 0, 0, 0}));
  used[0] = used[2] = 1;
  pointer_allowed(PointerTask::kTsp, 4, 5, {2, 0}, used.data(), m.data());
  EXPECT_EQ(m, (std::vector<float>{0, 0, 1, 0, 1, 0}));
  // Sort: end once all n are out.
  std::fill(used.begin(), used.end(), 1);
  pointer_allowed(PointerTask::kSort, 4, 5, {4, 0}, used.data(), m.data());
  EXPECT_EQ(m, (std::vector<float>{1, 0, 0, 0, 0, 0}));
  // Hull: a first vertex that leaves two higher indices; then higher indices than the first; end
  // from 3 vertices, or when nothing is left.
  std::fill(used.begin(), used.end(), 0);
  pointer_allowed(PointerTask::kHull, 5, 5, {}, used.data(), m.data());
  EXPECT_EQ(m, (std::vector<float>{0, 1, 1, 1, 0, 0})) << "a first vertex with two higher indices";
  used[1] = used[3] = 1;
  pointer_allowed(PointerTask::kHull, 5, 5, {2, 1}, used.data(), m.data());
  EXPECT_EQ(m, (std::vector<float>{0, 0, 0, 1, 0, 1}));
  used[4] = 1;
  pointer_allowed(PointerTask::kHull, 5, 5, {3, 1}, used.data(), m.data());
  EXPECT_EQ(m, (std::vector<float>{1, 0, 0, 1, 0, 0}));
  std::fill(used.begin(), used.end(), 0);
  used[4] = 1;
  pointer_allowed(PointerTask::kHull, 5, 5, {1, 4}, used.data(), m.data());
  EXPECT_EQ(m, (std::vector<float>{1, 0, 0, 0, 0, 0})) << "nothing left after the highest index: end";
  EXPECT_EQ(pointer_classes(std::vector<int>{2, 0}), (std::vector<int32_t>{3, 1, 0}));
  EXPECT_EQ(pointer_positions(std::vector<int32_t>{3, 1, 0, 2}), (std::vector<int>{2, 0}));
}

// An untrained model's outputs, greedy and beam: always valid for the task.
TEST(PointerStepModel, GreedyAndBeamNeverReturnInvalidOutputs) {
  for (const Variant& v : variants()) {
    core::Rng rng(11);
    PointerNet model(tiny_config(v, 8), rng);
    const auto set = v.task == PointerTask::kHull ? instances(v.task, {3, 9, 5, 7, 4}, 8)
                                                  : instances(v.task, {1, 2, 7, 5, 3}, 8);
    const decode::SourceBatch src = pointer_source(set);
    Graph g(false);
    auto check = [&](const decode::Hypothesis& h, size_t i, const std::string& what) {
      const int n = static_cast<int>(set[i].size());
      const std::vector<int> out = pointer_positions(h.ids);
      EXPECT_EQ(out.size(), h.ids.size()) << what << ": the end class inside an output";
      EXPECT_TRUE(h.finished) << what << " instance " << i << ": no end position";
      EXPECT_TRUE(std::isfinite(h.score)) << what;
      EXPECT_EQ(std::set<int>(out.begin(), out.end()).size(), out.size()) << what << ": an index repeated";
      for (int j : out) EXPECT_TRUE(j >= 0 && j < n) << what;
      switch (v.task) {
        case PointerTask::kSort: EXPECT_EQ(static_cast<int>(out.size()), n) << what; break;
        case PointerTask::kTsp: EXPECT_TRUE(tasks::is_valid_tour(out, n)) << what << " n=" << n; break;
        case PointerTask::kHull:
          EXPECT_GE(static_cast<int>(out.size()), std::min(3, n)) << what;
          for (size_t k = 1; k < out.size(); ++k) EXPECT_GT(out[k], out[0]) << what;
          break;
      }
    };
    const auto greedy = decode::greedy_search(g, model, src, {});
    for (size_t i = 0; i < greedy.size(); ++i) check(greedy[i], i, v.name + " greedy");
    for (int k : {1, 3, 8}) {
      const auto beams = decode::beam_search(g, model, src, {.beam = k, .n_best = k});
      for (size_t i = 0; i < beams.size(); ++i) {
        ASSERT_FALSE(beams[i].empty()) << v.name;
        for (const auto& h : beams[i]) check(h, i, v.name + " beam " + std::to_string(k));
        if (k == 1) { EXPECT_EQ(beams[i][0].ids, greedy[i].ids) << v.name << ": beam 1 != greedy"; }
      }
    }
  }
}

// Σ log p(target) from teacher forcing equals stepping the StepModel with the targets fed back.
// Both decoder input forms of step.cc: a few instances (at most kernels::kSmallRows: the inputs'
// projections made at encoding) and a larger batch (the embedded inputs, projected per step).
TEST(PointerStepModel, TeacherForcedLogProbEqualsStepping) {
  static_assert(core::kernels::kSmallRows < 10);
  for (const Variant& v : variants())
  for (const std::vector<int>& sizes : {std::vector<int>{6, 4, 5}, std::vector<int>{6, 4, 5, 3, 6, 2, 5, 4, 6, 3}}) {
    core::Rng rng(7);
    PointerNet model(tiny_config(v, 8), rng);
    const auto set = instances(v.task, sizes);
    const decode::SourceBatch src = pointer_source(set);
    Graph g(false);
    PointerForward fw = model.forward(g, src, targets_of(set));
    const int b = src.batch, vcls = src.steps + 1;
    std::vector<double> forced(b, 0.0);
    for (int t = 0; t < fw.steps; ++t)
      for (int i = 0; i < b; ++i) {
        const int32_t c = fw.targets[static_cast<size_t>(t) * b + i];
        if (c >= 0) forced[i] += fw.log_probs.data()[(static_cast<int64_t>(t) * b + i) * vcls + c];
      }
    for (int i = 0; i < b; ++i) {  // one instance at a time (reorder to its row)
      Graph rg(false);
      std::unique_ptr<decode::DecodeState> s = model.encode(rg, src);
      const std::vector<int32_t> row = {i};
      model.reorder(*s, row);
      int32_t prev = model.go_id();
      double stepped = 0;
      for (int32_t c : pointer_classes(set[i].target)) {
        rg.reset();
        const decode::StepOutput o = model.step(rg, *s, std::span(&prev, 1));
        stepped += o.log_probs.data[c];
        // The alignment is the pointer's distribution over the input positions.
        double total = std::exp(o.log_probs.data[kPointerEnd]);
        for (int j = 0; j < src.steps; ++j) total += o.alignment.data[j];
        EXPECT_NEAR(total, 1.0, 1e-5);
        prev = c;
      }
      EXPECT_NEAR(stepped, forced[i], 1e-4 * (1 + std::abs(forced[i])))
          << v.name << " instance " << i << " of " << b;
    }
  }
}

// Decoding on the packed copy of the weights (what run_line and serve use) and in batches of
// either input form gives the same outputs and log-probabilities as one plain batch.
TEST(PointerStepModel, PackedWeightsAndBatchSizesDecodeTheSame) {
  for (const Variant& v : variants()) {
    core::Rng rng(9);
    PointerNet model(tiny_config(v, 8), rng);
    const auto set = instances(v.task, {6, 4, 5, 3, 6, 2, 5, 4, 6, 3, 5});
    const core::PackedWeights packed = nn::packed_weights(model.params());
    PointerDecodeOptions all;
    all.batch_size = 64;
    const std::vector<PointerPrediction> want = predict_pointer(model, set, all);
    for (int batch : {1, 3}) {
      for (const core::PackedWeights* pw : {static_cast<const core::PackedWeights*>(nullptr), &packed}) {
        PointerDecodeOptions o;
        o.batch_size = batch;
        o.packed_weights = pw;
        const std::vector<PointerPrediction> got = predict_pointer(model, set, o);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < set.size(); ++i) {
          EXPECT_EQ(got[i].output, want[i].output) << v.name << " instance " << i << " batch " << batch;
          EXPECT_NEAR(got[i].log_prob, want[i].log_prob, 1e-4) << v.name << " instance " << i << " batch " << batch;
        }
      }
    }
  }
}

// Greedy outputs of `set` decoded in batches of 3 (so padding is exercised); `o` keeps that batch size.
std::vector<PointerPrediction> greedy_in_threes(const PointerNet& model, const std::vector<tasks::PointerInstance>& set,
                                                PointerDecodeOptions& o) {
  o.batch_size = 3;
  return predict_pointer(model, set, o);
}

// The kept outputs (`best`) against the greedy ones, per instance: finished; TSP a valid tour
// never longer than greedy's, else at least greedy's log-probability. Returns how many are
// better: TSP shorter tours, else other outputs.
int count_kept_better(const Variant& v, const std::vector<tasks::PointerInstance>& set,
                      const std::vector<PointerPrediction>& greedy, const std::vector<PointerPrediction>& best) {
  EXPECT_EQ(best.size(), set.size()) << v.name;
  int better = 0;
  for (size_t i = 0; i < std::min(set.size(), best.size()); ++i) {
    EXPECT_TRUE(best[i].finished) << v.name << " instance " << i;
    if (v.task == PointerTask::kTsp) {
      EXPECT_TRUE(tasks::is_valid_tour(best[i].output, set[i].size())) << v.name << " instance " << i;
      const double g = tasks::tour_length(set[i].points, greedy[i].output);
      const double b = tasks::tour_length(set[i].points, best[i].output);
      EXPECT_LE(b, g + 1e-12) << v.name << " instance " << i;
      better += b < g - 1e-9;
    } else {
      EXPECT_GE(best[i].log_prob, greedy[i].log_prob - 1e-9) << v.name << " instance " << i;
      better += best[i].output != greedy[i].output;
    }
  }
  return better;
}

// Sampling keeps, per instance, the best of the greedy output and the samples: for TSP a valid
// tour never longer than the greedy one (shorter on some instances of an untrained model), for
// sorting and hull an output of at least the greedy log-probability; the same seed gives the
// same outputs; bad options are refused.
TEST(PointerDecoding, SamplingKeepsTheBestOfGreedyAndTheSamples) {
  for (const Variant& v : variants()) {
    core::Rng rng(13);
    PointerNet model(tiny_config(v, 8), rng);
    const auto set = instances(v.task, {8, 6, 9, 7, 8, 5, 9, 6}, 21);
    PointerDecodeOptions o;
    const std::vector<PointerPrediction> greedy = greedy_in_threes(model, set, o);
    o.samples = 24;
    o.temperature = 1.5f;
    const std::vector<PointerPrediction> best = predict_pointer(model, set, o);
    ASSERT_EQ(best.size(), set.size());
    const int better = count_kept_better(v, set, greedy, best);
    if (v.task == PointerTask::kTsp) { EXPECT_GT(better, 0) << v.name << ": no sample beat greedy"; }
    const std::vector<PointerPrediction> again = predict_pointer(model, set, o);
    for (size_t i = 0; i < set.size(); ++i) EXPECT_EQ(again[i].output, best[i].output) << v.name << " instance " << i;
  }
  core::Rng rng(1);
  PointerNet model(tiny_config(variants()[0], 8), rng);
  const auto set = instances(PointerTask::kSort, {4});
  for (const auto& [samples, temperature] : {std::pair{-1, 1.0f}, std::pair{2, 0.0f}, std::pair{2, std::nanf("")}}) {
    PointerDecodeOptions o;
    o.samples = samples;
    o.temperature = temperature;
    EXPECT_NE(data::testing::error_of([&] { predict_pointer(model, set, o); }).find("temperature"), std::string::npos)
        << samples << " " << temperature;
  }
}

// The exact label of every view (its own hull / Held-Karp tour), taken back through
// pointer_view_back, is the instance's label: positions through the shuffled order, a mirrored
// hull turned counter-clockwise again, the start rotated to the task's. The attention of a step,
// peaked at the position it points to, follows its step; a row marked with each view position's
// point keeps every mark over that point.
TEST(PointerViews, EveryViewsLabelMapsBackToTheInstancesLabel) {
  for (const PointerTask task : {PointerTask::kHull, PointerTask::kTsp}) {
    const auto set = instances(task, {5, 9, 12, 8}, 31);
    for (const tasks::PointerInstance& in : set) {
      const size_t n = static_cast<size_t>(in.size());
      for (int v = 0; v < 64; v += v < 12 ? 1 : 13) {
        std::vector<int> order;
        const tasks::PointerInstance seen = pointer_view(in, v, order);
        ASSERT_EQ(seen.size(), in.size());
        std::vector<int> sorted = order;
        std::sort(sorted.begin(), sorted.end());
        std::vector<int> all(n);
        std::iota(all.begin(), all.end(), 0);
        ASSERT_EQ(sorted, all) << "view " << v;
        EXPECT_EQ(order == all, v < 8) << "view " << v << ": shuffled from view 8 on";
        PointerPrediction p;
        p.output = task == PointerTask::kHull ? tasks::convex_hull(seen.points) : tasks::held_karp_tour(seen.points);
        const size_t k = p.output.size();
        p.attention.assign((k + 1) * n, 0.0f);
        for (size_t r = 0; r < k; ++r) p.attention[r * n + static_cast<size_t>(p.output[r])] = 1.0f;
        for (size_t j = 0; j < n; ++j) p.attention[k * n + j] = static_cast<float>(order[j]);
        pointer_view_back(task, v, order, p);
        if (task == PointerTask::kHull) {
          EXPECT_EQ(p.output, in.target) << "hull, n " << n << ", view " << v;
        } else {
          ASSERT_TRUE(tasks::is_valid_tour(p.output, in.size())) << "view " << v;
          EXPECT_NEAR(tasks::tour_length(in.points, p.output), tasks::tour_length(in.points, in.target), 1e-5)
              << "tsp, n " << n << ", view " << v;
        }
        for (size_t r = 0; r < k; ++r)
          EXPECT_EQ(p.attention[r * n + static_cast<size_t>(p.output[r])], 1.0f) << "view " << v << " step " << r;
        for (size_t j = 0; j < n; ++j) EXPECT_EQ(p.attention[k * n + j], static_cast<float>(j)) << "view " << v;
      }
    }
  }
  std::vector<int> order;
  const auto sorting = instances(PointerTask::kSort, {4});
  EXPECT_NE(data::testing::error_of([&] { pointer_view(sorting[0], 1, order); }).find("2-D"), std::string::npos);
  const auto hull = instances(PointerTask::kHull, {6});
  EXPECT_NE(data::testing::error_of([&] { pointer_view(hull[0], 64, order); }).find("view 64"), std::string::npos);
  PointerPrediction bad;
  bad.output = {0, 6};
  order = {0, 1, 2, 3, 4, 5};
  EXPECT_NE(data::testing::error_of([&] { pointer_view_back(PointerTask::kHull, 9, order, bad); }).find("position 6"),
            std::string::npos);
}

// Decoding over views keeps, per instance, the best of its readings: never a less likely hull
// or a longer tour than the plain greedy one, always valid, hulls starting at their lowest index;
// the same again on a second call; sorting and out-of-range counts refused.
TEST(PointerDecoding, ViewsKeepTheBestReading) {
  for (const Variant& v : variants()) {
    if (v.task == PointerTask::kSort) continue;
    core::Rng rng(17);
    PointerNet model(tiny_config(v, 8), rng);
    PointerDecodeOptions o;
    const auto set = instances(v.task, {8, 6, 9, 7, 8, 5, 9, 6}, 23);
    const std::vector<PointerPrediction> greedy = greedy_in_threes(model, set, o);
    o.views = 12;
    o.attention = true;
    const std::vector<PointerPrediction> best = predict_pointer(model, set, o);
    ASSERT_EQ(best.size(), set.size());
    EXPECT_GT(count_kept_better(v, set, greedy, best), 0) << v.name << ": no view beat greedy";
    for (size_t i = 0; i < set.size(); ++i) {
      const std::vector<int>& out = best[i].output;
      EXPECT_EQ(best[i].attention.size(), (out.size() + 1) * static_cast<size_t>(set[i].size())) << v.name;
      if (v.task != PointerTask::kHull || out.empty()) continue;
      EXPECT_EQ(out[0], *std::min_element(out.begin(), out.end())) << v.name << " instance " << i;
      EXPECT_EQ(std::set<int>(out.begin(), out.end()).size(), out.size()) << v.name << " instance " << i;
    }
    const std::vector<PointerPrediction> again = predict_pointer(model, set, o);
    for (size_t i = 0; i < set.size(); ++i) EXPECT_EQ(again[i].output, best[i].output) << v.name << " instance " << i;
  }
  core::Rng rng(1);
  PointerNet sorter(tiny_config(variants()[0], 8), rng);
  PointerDecodeOptions o;
  o.views = 2;
  EXPECT_NE(data::testing::error_of([&] { predict_pointer(sorter, instances(PointerTask::kSort, {4}), o); }).find("sorting"),
            std::string::npos);
  PointerNet hull(tiny_config(variants()[1], 8), rng);
  for (const int views : {0, 65}) {
    o.views = views;
    EXPECT_NE(data::testing::error_of([&] { predict_pointer(hull, instances(PointerTask::kHull, {5}), o); }).find("views"),
              std::string::npos)
        << views;
  }
}

TEST(PointerCheckpoint, RoundTripThroughTheRegistryAndRunLine) {
  TempDir dir;
  core::Rng rng(9);
  const Variant v{"hull", PointerTask::kHull, PointerCell::kLstm, 1, 10.0f};
  PointerNet model(tiny_config(v, 8), rng);
  const std::string path = dir.file("ckpt");
  io::save_checkpoint(path, {.model_name = model.name(), .config = model.config(), .params = &model.params()});
  std::unique_ptr<LoadedModel> m = load_model(path);
  EXPECT_EQ(m->family(), "pointer");
  LoadedPointerModel& p = model_as<LoadedPointerModel>(*m, "pointer");
  EXPECT_EQ(p.model->cfg().glimpses, 1);
  EXPECT_FLOAT_EQ(p.model->cfg().logit_clip, 10.0f);
  ASSERT_EQ(p.params().numel(), model.params().numel());
  EXPECT_TRUE(std::equal(model.params().values(), model.params().values() + model.params().numel(),
                         p.params().values()));
  // run_line: the paper's line format, 1-based, closed; the line's own output is ignored.
  const auto set = instances(PointerTask::kHull, {8});
  const std::string line = tasks::format_pointer_line(set[0], tasks::pointer_file_options(PointerTask::kHull));
  const std::vector<PointerPrediction> pred = predict_pointer(model, set);
  std::string expected;
  for (int j : pred[0].output) expected += std::to_string(j + 1) + " ";
  expected += std::to_string(pred[0].output[0] + 1);
  EXPECT_EQ(m->run_line(line), expected);
  EXPECT_EQ(m->run_line(line.substr(0, line.find(" output"))), expected);
  EXPECT_THROW(m->run_line("0.1 0.2 0.3"), Error);  // an odd number of coordinates
  EXPECT_THROW(m->run_line(""), Error);
  // parse_request / run_requests: "views" decodes as predict_pointer over that many views; out of range refused.
  nlohmann::json points = nlohmann::json::array();
  for (int64_t i = 0; i < set[0].size(); ++i) points.push_back({set[0].points[2 * i], set[0].points[2 * i + 1]});
  PointerDecodeOptions o;
  o.views = 6;
  const PointerPrediction viewed = predict_pointer(model, set, o)[0];
  const nlohmann::json request = {{"points", points}, {"views", 6}};
  ServeLimits limits;
  const std::unique_ptr<Request> parsed = p.parse_request(request, limits);
  EXPECT_EQ(parsed->units, 1);
  const nlohmann::json reply = p.run_requests(std::vector<const Request*>{parsed.get()})[0];
  std::vector<int> closed = viewed.output;
  closed.push_back(closed.front());
  EXPECT_EQ(reply["output"].get<std::vector<int>>(), closed);
  EXPECT_NEAR(reply["log_prob"].get<double>(), viewed.log_prob, 1e-5);  // serve reads the packed weights
  EXPECT_EQ(reply["attention"].size(), viewed.output.size() + 1);
  for (const int bad : {0, limits.max_beam + 1}) {
    const nlohmann::json r = {{"points", points}, {"views", bad}};
    EXPECT_NE(data::testing::error_of([&] { p.parse_request(r, limits); }).find("views"), std::string::npos) << bad;
  }
}

TEST(PointerMetrics, ScoresAndTable) {
  const auto sort = instances(PointerTask::kSort, {5, 5});
  std::vector<PointerPrediction> p(2);
  p[0].output = sort[0].target, p[0].finished = true;
  p[1].output = sort[1].target, p[1].finished = true;
  std::swap(p[1].output[0], p[1].output[1]);
  EXPECT_DOUBLE_EQ(score_pointer(PointerTask::kSort, sort, p).exact, 0.5);
  const auto tsp = instances(PointerTask::kTsp, {6});
  std::vector<PointerPrediction> q(1);
  q[0].output = tsp[0].target, q[0].finished = true;
  PointerScore s = score_pointer(PointerTask::kTsp, tsp, q);
  EXPECT_NEAR(s.gap, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.valid, 1.0);
  const auto hull = instances(PointerTask::kHull, {10});
  std::vector<PointerPrediction> h(1);
  h[0].output = hull[0].target, h[0].finished = true;
  EXPECT_DOUBLE_EQ(score_pointer(PointerTask::kHull, hull, h).wrong_start, 0.0);
  std::rotate(h[0].output.begin(), h[0].output.begin() + 1, h[0].output.end());  // same cycle
  s = score_pointer(PointerTask::kHull, hull, h);
  EXPECT_DOUBLE_EQ(s.exact, 1.0);
  EXPECT_NEAR(s.coverage, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.fail, 0.0);
  EXPECT_DOUBLE_EQ(s.wrong_start, 1.0) << "the same cycle from another vertex";
  const std::string hull_table = pointer_eval_table(PointerTask::kHull, {{{10, "", s}}});
  EXPECT_NE(hull_table.find("| 10 | 1 | 100.0% | 100.0% | 0.0% | 100.0% |"), std::string::npos) << hull_table;
  h[0].output.resize(2);  // a segment is no polygon
  EXPECT_DOUBLE_EQ(score_pointer(PointerTask::kHull, hull, h).fail, 1.0);
  const std::vector<PointerEvalRow> rows = {{5, "Held-Karp", score_pointer(PointerTask::kTsp, tsp, q)}};
  const std::string table = pointer_eval_table(PointerTask::kTsp, rows);
  EXPECT_NE(table.find("| 5 | 1 |"), std::string::npos) << table;
  EXPECT_NE(table.find("0.0%"), std::string::npos) << table;
}

TEST(PointerShow, SvgIsWellFormedWithBothPanelsAndTheHeatmap) {
  for (PointerTask task : {PointerTask::kTsp, PointerTask::kSort, PointerTask::kHull}) {
    core::Rng rng(2);
    PointerNet model(tiny_config({"", task}, 8), rng);
    const PointerShow s = show_pointer(model, 7, 3, 2);
    ASSERT_FALSE(s.prediction.attention.empty());
    EXPECT_EQ(s.prediction.attention.size() % 7, 0u);
    const viz::testing::XmlElement root = viz::testing::parse_xml(s.svg);
    EXPECT_EQ(root.name, "svg");
    EXPECT_EQ(root.find_all("svg").size(), 2u) << "the heatmap nested in the picture";
    EXPECT_GE(root.find_all("circle").size(), 14u) << "the points in both panels";
    EXPECT_NE(s.summary.find("n = 7"), std::string::npos) << s.summary;
    if (task == PointerTask::kSort) continue;
    const PointerShow v = show_pointer(model, 7, 3, 1, 12);  // the kept reading, drawn in the instance's order
    EXPECT_EQ(v.prediction.attention.size(), (v.prediction.output.size() + 1) * 7u);
    EXPECT_NE(v.summary.find("greedy, 12 views"), std::string::npos) << v.summary;
    EXPECT_EQ(viz::testing::parse_xml(v.svg).find_all("svg").size(), 2u);
  }
}

// data.batch_by_n: every batch holds one n, the n vary over [min_n, max_n] between batches, the
// batches are reproducible, and without it a batch mixes sizes; a fixed training set is refused.
TEST(PointerTrainData, BatchByNGivesEachBatchOneSize) {
  PointerDataConfig d;
  d.task = PointerTask::kHull;
  d.min_n = 5;
  d.max_n = 12;
  d.batch_size = 16;
  std::set<int> sizes;
  for (int64_t index = 0; index < 40; ++index) {
    d.batch_by_n = true;
    const auto batch = fresh_pointer_batch(d, true, 1, 40, index);
    ASSERT_EQ(batch.size(), 16u);
    const int n = static_cast<int>(batch[0].size());
    for (const auto& in : batch) {
      EXPECT_EQ(in.size(), n) << "batch " << index;
      EXPECT_FALSE(in.target.empty());
    }
    sizes.insert(n);
    const auto again = fresh_pointer_batch(d, true, 1, 40, index);
    EXPECT_EQ(again[5].points, batch[5].points) << "batch " << index;
    d.batch_by_n = false;
    std::set<int64_t> mixed;
    for (const auto& in : fresh_pointer_batch(d, true, 1, 40, index)) mixed.insert(in.size());
    EXPECT_GT(mixed.size(), 1u) << "batch " << index;
  }
  EXPECT_GE(sizes.size(), 6u) << "of the 8 sizes 5-12 over 40 batches";
  EXPECT_TRUE(sizes.count(5) || sizes.count(12));
  for (int n : sizes) EXPECT_TRUE(n >= 5 && n <= 12) << n;
  d.batch_by_n = true;
  d.train_instances = 64;
  EXPECT_THROW(d.validate(), Error);
}

// Sorting 5 numbers learnt to > 90% exact sequences in seconds, through the family's train entry
// (engram train), then loaded from the run directory.
TEST(PointerLearnability, SortsFiveNumbers) {
  TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  const YAML::Node node = YAML::Load("model: pointer\n");
  const std::vector<std::string> sets = {
      "data.task=sort", "data.min_n=5", "data.max_n=5", "data.batch_size=64", "data.batches_per_epoch=100",
      "data.valid_instances=200", "pointer.hidden=64", "pointer.embed_dim=32", "train.max_epochs=8",
      "train.optimizer.lr=0.003", "train.clip.global_norm=2", "train.log_every=1000",
      "train.run_dir=" + dir.file("run")};
  const std::string summary = family("pointer").train(node, "<test>", sets);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::unique_ptr<LoadedPointerModel> m = load_model_as<LoadedPointerModel>(dir.file("run"), "pointer");
  const auto test = pointer_test_set(PointerTask::kSort, 5, 500, 99, 8);
  const PointerScore s = score_pointer(PointerTask::kSort, test, predict_pointer(*m->model, test));
  std::printf("sort 5: %.1f%% exact after %.1f s (%s)\n", 100 * s.exact, secs, summary.c_str());
  EXPECT_GT(s.exact, 0.90);
}

TEST(PointerLearnability, TheShippedTspConfigFitsTheToursItTrainsOn) {
  // configs/pointer-tsp.yaml at a small size must be able to fit 16 training instances exactly
  // (validation set = training set). With logit clipping C = 10 (10 tanh(u)), which the config
  // once had, the same run stops at a 9% gap and a loss of 0.7 nats per tour: the tanh saturates
  // and the scores stop separating (bench/results_pointer.md).
  data::testing::TempDir dir;
  const std::string config = std::string(ENGRAM_SOURCE_DIR) + "/configs/pointer-tsp.yaml";
  const std::vector<std::string> sets = {
      "data.min_n=5", "data.max_n=5", "pointer.hidden=32", "pointer.embed_dim=32", "data.batch_size=16",
      "data.train_instances=16", "data.valid_instances=16", "data.seed=1", "data.valid_seed=1",
      "train.max_epochs=300", "train.patience=0", "train.max_minutes=0", "train.valid_every=100",
      "train.schedule.name=constant", "train.log_every=1000", "train.run_dir=" + dir.file("run")};
  ::testing::internal::CaptureStdout();
  family("pointer").train(io::load_yaml_file(config), config, sets);
  ::testing::internal::GetCapturedStdout();
  const auto loaded = load_model_as<LoadedPointerModel>(std::filesystem::path(dir.file("run")) / "last", "pointer");
  EXPECT_EQ(loaded->model->cfg().logit_clip, 0.0f);
  std::vector<tasks::PointerInstance> set;
  const tasks::PointerTaskOptions o{.task = PointerTask::kTsp, .min_n = 5, .max_n = 5};
  for (uint64_t i = 0; i < 16; ++i) set.push_back(tasks::make_pointer_instance(o, 1, i));
  const PointerScore s = score_pointer(PointerTask::kTsp, set, predict_pointer(*loaded->model, set));
  EXPECT_LT(s.gap, 1e-6) << "greedy tours " << 100 * s.gap << "% above the labels on the training instances";
  core::Graph g;
  const double nll = loaded->model->loss(g, pointer_source(set), targets_of(set)).data()[0] / 16;
  EXPECT_LT(nll, 0.1) << "nats per tour";
}


}  // namespace pointer_test
}  // namespace engram::models
