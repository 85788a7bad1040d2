// Toy StepModels for the search tests: next-token distributions (and attention weights) given as
// functions of (sentence, prefix), so every expected output can be worked out by hand or by
// enumeration.
// Dims: N rows, V classes, S padded source length, S_b a sentence's own length.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "engram/core/graph.h"
#include "engram/core/rng.h"
#include "engram/decode/step_model.h"

namespace engram::decode::toy {

constexpr int32_t kGo = 2, kEos = 3;

// A model whose next-token distribution is a function of (sentence, prefix). The state is the
// list of prefixes, one per row. The attention of a step is one-hot at (prefix length mod S), or
// what set_align() gives (zero on the padded positions S_b ... S - 1), or none at all; its gate
// (StepOutput::gate) is what set_gate() gives, else none.
class ToyModel final : public StepModel {
 public:
  using Dist = std::function<std::vector<double>(int sentence, const std::vector<int32_t>& prefix)>;  // probs [V]
  using Align = std::function<std::vector<double>(int sentence, const std::vector<int32_t>& prefix, int src_len)>;
  ToyModel(int vocab, Dist dist) : vocab_(vocab), dist_(std::move(dist)) {}
  using Gate = std::function<double(int sentence, const std::vector<int32_t>& prefix)>;
  void set_align(Align align) { align_ = std::move(align); }  // α [S_b] of the step after `prefix`
  void set_gate(Gate gate) { gate_ = std::move(gate); }       // the gate of the step after `prefix`
  void set_no_attention() { attention_ = false; }

  struct State final : DecodeState {
    int rows() const override { return static_cast<int>(prefix.size()); }
    std::vector<std::vector<int32_t>> prefix;
    std::vector<int> sentence, src_len;
    int src_steps = 0;
    bool started = false;  // a step has run: prev ids extend the prefixes
  };
  int32_t go_id() const override { return kGo; }
  int32_t eos_id() const override { return kEos; }
  std::unique_ptr<DecodeState> encode(core::Graph&, const SourceBatch& src) const override {
    auto st = std::make_unique<State>();
    for (int b = 0; b < src.batch; ++b) {
      st->prefix.emplace_back();
      st->sentence.push_back(src.ids[b]);  // the first source token names the sentence
      st->src_len.push_back(src.lengths[b]);
    }
    st->src_steps = src.steps;
    return st;
  }
  StepOutput step(core::Graph& g, DecodeState& state, std::span<const int32_t> prev) const override {
    auto& st = static_cast<State&>(state);
    const int n = st.rows();
    core::Tensor lp = g.alloc({n, vocab_}), al = g.alloc({n, st.src_steps}), gate = g.alloc({n});
    for (int r = 0; r < n; ++r) {
      if (st.started) st.prefix[r].push_back(prev[r]);  // (a later <go> is an ordinary token here)
      else EXPECT_EQ(prev[r], kGo);
      std::vector<double> p = dist_(st.sentence[r], st.prefix[r]);
      for (int v = 0; v < vocab_; ++v) lp.at(r, v) = static_cast<float>(std::log(p[v]));
      std::vector<double> a(st.src_steps, 0.0);
      if (align_) {
        const std::vector<double> own = align_(st.sentence[r], st.prefix[r], st.src_len[r]);
        EXPECT_EQ(static_cast<int>(own.size()), st.src_len[r]);
        std::copy(own.begin(), own.end(), a.begin());
      } else {
        a[st.prefix[r].size() % st.src_steps] = 1.0;
      }
      for (int s = 0; s < st.src_steps; ++s) al.at(r, s) = static_cast<float>(a[s]);
      if (gate_) gate.data[r] = static_cast<float>(gate_(st.sentence[r], st.prefix[r]));
    }
    ++steps;
    st.started = true;
    return {lp, attention_ ? al : core::Tensor{}, gate_ ? gate : core::Tensor{}};
  }
  void reorder(DecodeState& state, std::span<const int32_t> rows) const override {
    auto& st = static_cast<State&>(state);
    State next;
    for (int32_t r : rows) {
      next.prefix.push_back(st.prefix[r]);
      next.sentence.push_back(st.sentence[r]);
      next.src_len.push_back(st.src_len[r]);
    }
    st.prefix.swap(next.prefix);
    st.sentence.swap(next.sentence);
    st.src_len.swap(next.src_len);
  }
  mutable int steps = 0;

 private:
  int vocab_;
  Dist dist_;
  Align align_;
  Gate gate_;
  bool attention_ = true;
};

// Pseudo-random but fixed distribution over V tokens for each (sentence, prefix); <go> and
// <pad>/<unk> get a tiny probability.
inline ToyModel::Dist random_dist(int vocab, uint64_t salt) {
  return [vocab, salt](int sentence, const std::vector<int32_t>& prefix) {
    uint64_t h = 1469598103934665603ull ^ salt ^ (static_cast<uint64_t>(sentence) * 0x9E3779B97F4A7C15ull);
    for (int32_t t : prefix) h = (h ^ static_cast<uint64_t>(t + 1)) * 1099511628211ull;
    core::Rng rng(h);
    std::vector<double> p(vocab);
    double total = 0;
    for (int v = 0; v < vocab; ++v) total += p[v] = (v == kGo || v < 2) ? 1e-3 : std::exp(3.0 * rng.uniform());
    for (double& x : p) x /= total;
    return p;
  };
}

// Sentence i of the batch: `lengths[i]` copies of the id i.
inline SourceBatch sources(const std::vector<int>& lengths) {
  std::vector<std::vector<int32_t>> seqs;
  for (size_t i = 0; i < lengths.size(); ++i) seqs.push_back(std::vector<int32_t>(lengths[i], static_cast<int32_t>(i)));
  return SourceBatch::from_ids(seqs);
}

// All complete hypotheses (ending in <eos>, or unfinished at max_len) with their log-probs, as the
// model reports them (rounded to float per step). `allowed(prefix, token)` says whether a token may
// follow a prefix (everything by default).
using Allowed = std::function<bool(const std::vector<int32_t>& prefix, int32_t token)>;
inline void enumerate(const ToyModel::Dist& dist, int sentence, int vocab, int max_len, std::vector<int32_t>& prefix,
                      double lp, std::vector<std::pair<double, std::vector<int32_t>>>& out,
                      const Allowed& allowed = nullptr) {
  std::vector<double> p = dist(sentence, prefix);
  for (int v = 0; v < vocab; ++v) {
    if (allowed && !allowed(prefix, v)) continue;
    const double l = lp + static_cast<double>(static_cast<float>(std::log(p[v])));
    if (v == kEos) {
      out.push_back({l, prefix});
    } else {
      prefix.push_back(v);
      if (static_cast<int>(prefix.size()) == max_len) out.push_back({l, prefix});
      else enumerate(dist, sentence, vocab, max_len, prefix, l, out, allowed);
      prefix.pop_back();
    }
  }
}

}  // namespace engram::decode::toy
