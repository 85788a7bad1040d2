// Beam search over a StepModel, batched across sentences (BeamSearch below).
// Dims: B sentences, K beam, N live rows, V classes, W = max S_b (coverage), S α width.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "engram/core/error.h"
#include "engram/core/kernels/parallel.h"
#include "engram/decode/search.h"
#include "engram/decode/search_steps.h"

namespace engram::decode {

namespace {

using namespace detail;

// Beam search over a batch of sentences, one step at a time. Live rows of sentence s are
// [begin, begin + count[s]) in the model's state, sentences in `active_` order. The first step
// runs one row per sentence (the empty prefix: the state as encoded) and expands it into up to K
// prefixes; from then on each sentence has up to K rows. A step: the model's log-probabilities,
// then forced prefix tokens and the search's masks (prepare_rows), coverage (add_step_coverage),
// each row's 2K best classes (best_classes), each sentence's K best extensions and its ended
// hypotheses (select), and the state reordered to the surviving rows (advance).
// Dims: B sentences, N live rows, K beam, V classes, W = max S_b (coverage), S α width.
class BeamSearch {
 public:
  BeamSearch(const StepModel& model, const SourceBatch& src, const SearchOptions& options);
  std::vector<std::vector<Hypothesis>> run(core::Graph& g);

 private:
  void prepare_rows(StepOutput& out, int t, int rows, int v);
  void add_step_coverage(const StepOutput& out, int rows);
  void best_classes(StepOutput& out, int rows, int v);
  void select(const StepOutput& out, int t, int v);
  // The state reordered to the rows select() kept; false when no sentence is left.
  bool advance(DecodeState& state);
  std::vector<std::vector<Hypothesis>> results() const;

  const StepModel& model_;
  const SourceBatch& src_;
  const SearchOptions& o_;
  const int k_, b_;
  const bool masking_, coverage_;
  std::vector<int> active_, count_, max_len_;
  std::vector<double> row_lp_;      // [N] prefix log-probability
  std::vector<int32_t> row_node_;   // [N] prefix node
  std::vector<int32_t> prev_;       // [N] each row's last token
  std::vector<std::vector<Ended>> ended_;  // [B]
  int cov_width_ = 0;               // W: coverage rows are [W], sentence s using its first S_s
  std::vector<double> row_cov_;     // [N, W] Σ_j α_ji of each prefix
  std::vector<double> step_cov_;    // [N, W] ... and this step's α
  PrefixTree tree_;
  int align_width_ = 0;             // S of the recorded α rows
  std::vector<Candidate> cands_;
  std::vector<int32_t> row_best_;   // [N, per_row] each live row's best classes, best first
  int per_row_ = 0;
  std::vector<double> scores_;
  std::vector<int32_t> row_sentence_, prefix_, scratch_;  // [N]; one prefix's tokens
  StepMasks masks_;
  // select()'s survivors: rows, their tokens, nodes, log-probabilities and coverage.
  std::vector<int32_t> live_rows_, live_prev_, live_node_;
  std::vector<double> live_lp_, live_cov_;
  std::vector<int> next_active_, next_count_;
};

BeamSearch::BeamSearch(const StepModel& model, const SourceBatch& src, const SearchOptions& options)
    : model_(model),
      src_(src),
      o_(options),
      k_(options.beam),
      b_(src.batch),
      masking_(options.min_length > 0 || options.block_ngram_repeat > 0),
      coverage_(options.coverage_penalty > 0.0f),
      active_(b_),
      count_(b_, 1),
      max_len_(b_),
      row_lp_(b_, 0.0),
      row_node_(b_, -1),
      prev_(b_, model.go_id()),
      ended_(b_) {
  for (int s = 0; s < b_; ++s) {
    active_[s] = s;
    max_len_[s] = static_cast<int>(prefix_of(src, s).size()) + max_output_length(src.lengths[s], options);
    cov_width_ = std::max(cov_width_, src.lengths[s]);
  }
  if (!coverage_) cov_width_ = 0;
  row_cov_.assign(static_cast<size_t>(b_) * cov_width_, 0.0);
}

// Every live prefix has t tokens: a target prefix's token is forced while t is inside it; the
// search's masks (min_length, blocked n-grams) go in first otherwise.
void BeamSearch::prepare_rows(StepOutput& out, int t, int rows, int v) {
  row_sentence_.clear();
  for (int s : active_) row_sentence_.insert(row_sentence_.end(), count_[s], s);
  masks_.start(rows);
  for (int r = 0; r < rows; ++r) {
    const std::span<const int32_t> forced = prefix_of(src_, row_sentence_[r]);
    if (t < static_cast<int>(forced.size()))
      force_row(out.log_probs.data + static_cast<int64_t>(r) * v, v, forced[t], row_sentence_[r], t);
  }
  if (!masking_) return;
  for (int r = 0; r < rows; ++r) {
    if (t < static_cast<int>(prefix_of(src_, row_sentence_[r]).size())) continue;
    prefix_.clear();
    if (o_.block_ngram_repeat > 0) {
      for (int32_t node = row_node_[r]; node >= 0; node = tree_.parent[node]) prefix_.push_back(tree_.token[node]);
      std::reverse(prefix_.begin(), prefix_.end());
    }
    mask_row(out.log_probs.data + static_cast<int64_t>(r) * v, v, r, t, prefix_, o_, model_.eos_id(), masks_,
             scratch_);
  }
}

void BeamSearch::add_step_coverage(const StepOutput& out, int rows) {
  if (!coverage_) return;
  step_cov_.assign(row_cov_.begin(), row_cov_.end());
  for (int r = 0; r < rows; ++r) {
    double* cov = step_cov_.data() + static_cast<int64_t>(r) * cov_width_;
    add_coverage(out.alignment, r, src_.lengths[row_sentence_[r]], cov);
  }
}

// Every live row's 2K best classes, rows split over the threads (each row independent, so the
// result does not depend on the split).
void BeamSearch::best_classes(StepOutput& out, int rows, int v) {
  per_row_ = std::min(2 * k_, v);
  row_best_.resize(static_cast<size_t>(rows) * per_row_);
  auto best_of_row = [&](int64_t r, std::vector<int32_t>& order) {
    top_k(out.log_probs.data + r * v, v, per_row_, order);
    std::copy(order.begin(), order.end(), row_best_.begin() + r * per_row_);
  };
  core::kernels::parallel_for(rows, 1, [&](int64_t r0, int64_t r1) {
    std::vector<int32_t> order;
    for (int64_t r = r0; r < r1; ++r) best_of_row(r, order);
  });
  if (!masking_) return;
  for (int r = 0; r < rows; ++r) {  // a row the search's masks left no allowed class gets them lifted
    float* lp = out.log_probs.data + static_cast<int64_t>(r) * v;
    if (masks_.any(r) && !std::isfinite(lp[row_best_[static_cast<size_t>(r) * per_row_]])) {
      masks_.lift(lp, r);
      best_of_row(r, scratch_);
    }
  }
}

void BeamSearch::select(const StepOutput& out, int t, int v) {
  const int level = t + 1;  // tokens of a prefix made now
  const double lp_level = length_penalty(level, o_.alpha);
  const bool record_align = o_.alignments && out.alignment.data;
  const int s_pad = record_align ? out.alignment.shape[1] : 0;
  if (record_align) align_width_ = s_pad;
  live_rows_.clear(), live_prev_.clear(), live_node_.clear(), live_lp_.clear(), live_cov_.clear();
  next_active_.clear(), next_count_.clear();
  int begin = 0;
  for (size_t a = 0; a < active_.size(); ++a) {
    const int s = active_[a];
    // The 2K best (row, token) extensions of this sentence's live prefixes.
    cands_.clear();
    for (int r = begin; r < begin + count_[s]; ++r) {
      const float* lp = out.log_probs.data + static_cast<int64_t>(r) * v;
      const int32_t* best = row_best_.data() + static_cast<int64_t>(r) * per_row_;
      for (int i = 0; i < per_row_; ++i)  // classes the model masks (-inf) or broke (NaN) never enter a beam
        if (std::isfinite(lp[best[i]])) cands_.push_back({row_lp_[r] + lp[best[i]], r, best[i]});
    }
    begin += count_[s];
    std::stable_sort(cands_.begin(), cands_.end(),
                     [](const Candidate& x, const Candidate& y) { return x.log_prob > y.log_prob; });
    const size_t first_new = live_rows_.size();
    int alive = 0;
    for (size_t rank = 0; rank < cands_.size() && alive < k_; ++rank) {
      const Candidate& c = cands_[rank];
      const double* cov = step_cov_.data() + static_cast<int64_t>(c.row) * cov_width_;
      if (c.token == model_.eos_id()) {  // a finished hypothesis, if it ranks within the beam
        if (static_cast<int>(rank) >= k_) continue;
        const double score = c.log_prob / lp_level + coverage_term(cov, src_.lengths[s], o_.coverage_penalty);
        Ended e{c.log_prob, score, row_node_[c.row], true, {}};
        if (o_.alignments) append_alignment(out.alignment, c.row, src_.lengths[s], e.eos_align);
        if (o_.alignments && out.gate.data) e.eos_gate.push_back(out.gate.data[c.row]);
        ended_[s].push_back(std::move(e));
        continue;
      }
      tree_.parent.push_back(row_node_[c.row]);
      tree_.token.push_back(c.token);
      if (record_align) {
        const float* al = out.alignment.data + static_cast<int64_t>(c.row) * s_pad;
        tree_.align.insert(tree_.align.end(), al, al + s_pad);
      }
      if (o_.alignments && out.gate.data) tree_.gate.push_back(out.gate.data[c.row]);
      live_rows_.push_back(c.row);
      live_prev_.push_back(c.token);
      live_node_.push_back(static_cast<int32_t>(tree_.token.size()) - 1);
      live_lp_.push_back(c.log_prob);
      if (coverage_) live_cov_.insert(live_cov_.end(), cov, cov + cov_width_);
      ++alive;
    }
    bool done = alive == 0;
    if (!done && level >= max_len_[s]) {  // out of length: the live prefixes end unfinished
      for (size_t i = first_new; i < live_rows_.size(); ++i) {
        const double cp = coverage_term(live_cov_.data() + i * cov_width_, src_.lengths[s], o_.coverage_penalty);
        ended_[s].push_back({live_lp_[i], live_lp_[i] / lp_level + cp, live_node_[i], false, {}});
      }
      done = true;
    }
    if (!done && static_cast<int>(ended_[s].size()) >= k_) {
      scores_.clear();
      for (const Ended& e : ended_[s]) scores_.push_back(e.score);
      std::nth_element(scores_.begin(), scores_.begin() + (k_ - 1), scores_.end(), std::greater<double>());
      done = live_lp_[first_new] / lp_level <= scores_[k_ - 1];  // + cp's bound, 0
    }
    if (done) {  // the sentence leaves the state
      live_rows_.resize(first_new);
      live_prev_.resize(first_new);
      live_node_.resize(first_new);
      live_lp_.resize(first_new);
      live_cov_.resize(first_new * cov_width_);
    } else {
      next_active_.push_back(s);
      next_count_.push_back(alive);
    }
  }
}

bool BeamSearch::advance(DecodeState& state) {
  std::vector<int> next_count_by_sentence(b_, 0);
  for (size_t a = 0; a < next_active_.size(); ++a) next_count_by_sentence[next_active_[a]] = next_count_[a];
  active_.swap(next_active_);
  count_.swap(next_count_by_sentence);
  if (active_.empty()) return false;
  model_.reorder(state, live_rows_);
  prev_.swap(live_prev_);
  row_lp_.swap(live_lp_);
  row_node_.swap(live_node_);
  row_cov_.swap(live_cov_);
  return true;
}

// n-best lists: best score first (stable: earlier-ended first among equal scores).
std::vector<std::vector<Hypothesis>> BeamSearch::results() const {
  std::vector<std::vector<Hypothesis>> result(b_);
  for (int s = 0; s < b_; ++s) {
    std::vector<Ended> es = ended_[s];
    std::stable_sort(es.begin(), es.end(), [](const Ended& x, const Ended& y) { return x.score > y.score; });
    const int n = std::min<int>(o_.n_best, static_cast<int>(es.size()));
    for (int i = 0; i < n; ++i) {
      const Ended& e = es[i];
      Hypothesis h;
      h.log_prob = e.log_prob;
      h.score = e.score;
      h.finished = e.finished;
      h.src_len = src_.lengths[s];
      std::vector<int32_t> nodes;
      for (int32_t node = e.node; node >= 0; node = tree_.parent[node]) nodes.push_back(node);
      std::reverse(nodes.begin(), nodes.end());
      for (int32_t node : nodes) {
        h.ids.push_back(tree_.token[node]);
        if (!tree_.align.empty()) {
          const float* al = tree_.align.data() + static_cast<int64_t>(node) * align_width_;
          h.alignment.insert(h.alignment.end(), al, al + std::min(h.src_len, align_width_));
        }
        if (!tree_.gate.empty()) h.gate.push_back(tree_.gate[node]);
      }
      h.alignment.insert(h.alignment.end(), e.eos_align.begin(), e.eos_align.end());
      h.gate.insert(h.gate.end(), e.eos_gate.begin(), e.eos_gate.end());
      result[s].push_back(std::move(h));
    }
  }
  return result;
}

std::vector<std::vector<Hypothesis>> BeamSearch::run(core::Graph& g) {
  g.reset();
  std::unique_ptr<DecodeState> state = model_.encode(g, src_);
  for (int t = 0; !active_.empty(); ++t) {
    g.reset();
    const int rows = static_cast<int>(prev_.size());
    StepOutput out = model_.step(g, *state, prev_);
    check_step(out, rows, model_, o_);
    const int v = out.log_probs.shape[1];
    prepare_rows(out, t, rows, v);
    add_step_coverage(out, rows);
    best_classes(out, rows, v);
    select(out, t, v);
    if (!advance(*state)) break;
  }
  return results();
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(core::Graph& g, const StepModel& model, const SourceBatch& src,
                                                 const SearchOptions& options) {
  check_source(src, model.eos_id());
  options.validate();
  ENGRAM_CHECK(!options.on_token, "search: token streaming is greedy or sampling only, not beam search");
  return BeamSearch(model, src, options).run(g);
}

}  // namespace engram::decode
