// NTM copy, repeat-copy and associative-recall batches (see ntm_tasks.h).
#include "engram/data/tasks/ntm_tasks.h"

#include <cmath>

#include "engram/core/error.h"

namespace engram::data::tasks {
namespace {

SeqBatch make_batch(int64_t steps, int64_t batch, int64_t in_width, int64_t out_width) {
  SeqBatch s;
  s.steps = steps;
  s.batch = batch;
  s.in_width = in_width;
  s.out_width = out_width;
  s.input.assign(steps * batch * in_width, 0.0f);
  s.target.assign(steps * batch * out_width, 0.0f);
  s.mask.assign(steps * batch, 0.0f);
  return s;
}

float& in_ref(SeqBatch& s, int64_t t, int64_t b, int64_t w) {
  return s.input[(t * s.batch + b) * s.in_width + w];
}
float& tgt_ref(SeqBatch& s, int64_t t, int64_t b, int64_t k) {
  return s.target[(t * s.batch + b) * s.out_width + k];
}

int draw(core::Rng& rng, int lo, int hi) {
  return lo + static_cast<int>(rng.below(static_cast<uint64_t>(hi - lo + 1)));
}

void check_range(const char* task, const char* what, int lo, int hi, int min_allowed) {
  ENGRAM_CHECK(lo >= min_allowed && lo <= hi, "{}: need {} <= min_{} <= max_{}, got {} and {}",
               task, min_allowed, what, what, lo, hi);
}

}  // namespace

SeqBatch make_copy_batch(const CopyOptions& o, int64_t batch, core::Rng& rng) {
  ENGRAM_CHECK(o.bits >= 1 && batch >= 1, "copy: bits {} and batch {} must be >= 1", o.bits, batch);
  check_range("copy", "len", o.min_len, o.max_len, 1);
  const int L = draw(rng, o.min_len, o.max_len);
  SeqBatch s = make_batch(2 * L + 1, batch, o.bits + 1, o.bits);
  for (int64_t b = 0; b < batch; ++b) {
    for (int t = 0; t < L; ++t) {
      for (int k = 0; k < o.bits; ++k) {
        const float bit = static_cast<float>(rng.below(2));
        in_ref(s, t, b, k) = bit;
        tgt_ref(s, L + 1 + t, b, k) = bit;
      }
      s.mask[(L + 1 + t) * batch + b] = 1.0f;
    }
    in_ref(s, L, b, o.bits) = 1.0f;  // delimiter
  }
  return s;
}

float normalised_repeat(int repeat, const RepeatCopyOptions& o) {
  const double n = o.max_repeat - o.min_repeat + 1;
  if (n <= 1) return 0.0f;
  const double mean = 0.5 * (o.min_repeat + o.max_repeat);
  const double stddev = std::sqrt((n * n - 1.0) / 12.0);  // discrete uniform
  return static_cast<float>((repeat - mean) / stddev);
}

SeqBatch make_repeat_copy_batch(const RepeatCopyOptions& o, int64_t batch, core::Rng& rng) {
  ENGRAM_CHECK(o.bits >= 1 && batch >= 1, "repeat copy: bits {} and batch {} must be >= 1", o.bits,
               batch);
  check_range("repeat copy", "len", o.min_len, o.max_len, 1);
  check_range("repeat copy", "repeat", o.min_repeat, o.max_repeat, 1);
  const int L = draw(rng, o.min_len, o.max_len);
  const int R = draw(rng, o.min_repeat, o.max_repeat);
  const int64_t T = L + 1 + static_cast<int64_t>(L) * R + 1;
  SeqBatch s = make_batch(T, batch, o.bits + 2, o.bits + 1);
  const float count = normalised_repeat(R, o);
  for (int64_t b = 0; b < batch; ++b) {
    for (int t = 0; t < L; ++t) {
      for (int k = 0; k < o.bits; ++k) {
        const float bit = static_cast<float>(rng.below(2));
        in_ref(s, t, b, k) = bit;
        for (int r = 0; r < R; ++r) tgt_ref(s, L + 1 + r * L + t, b, k) = bit;
      }
    }
    in_ref(s, L, b, o.bits) = 1.0f;
    in_ref(s, L, b, o.bits + 1) = count;
    tgt_ref(s, T - 1, b, o.bits) = 1.0f;  // end marker
    for (int64_t t = L + 1; t < T; ++t) s.mask[t * batch + b] = 1.0f;
  }
  return s;
}

SeqBatch make_recall_batch(const RecallOptions& o, int64_t batch, core::Rng& rng) {
  ENGRAM_CHECK(o.bits >= 1 && o.item_len >= 1 && batch >= 1,
               "recall: bits {}, item_len {} and batch {} must be >= 1", o.bits, o.item_len, batch);
  check_range("recall", "items", o.min_items, o.max_items, 2);
  const int n = draw(rng, o.min_items, o.max_items);
  const int step = o.item_len + 1;
  const int64_t T = static_cast<int64_t>(n) * step + o.item_len + 2 + o.item_len;
  SeqBatch s = make_batch(T, batch, o.bits + 2, o.bits);
  const int query_start = n * step;  // query delimiter step
  const int answer_start = query_start + o.item_len + 2;
  for (int64_t b = 0; b < batch; ++b) {
    // items[i][j][k]: item i, vector j, bit k
    std::vector<float> items(static_cast<size_t>(n) * o.item_len * o.bits);
    for (auto& v : items) v = static_cast<float>(rng.below(2));
    auto bit = [&](int i, int j, int k) {
      return items[(static_cast<size_t>(i) * o.item_len + j) * o.bits + k];
    };
    for (int i = 0; i < n; ++i) {
      in_ref(s, i * step, b, o.bits) = 1.0f;  // item delimiter
      for (int j = 0; j < o.item_len; ++j) {
        for (int k = 0; k < o.bits; ++k) in_ref(s, i * step + 1 + j, b, k) = bit(i, j, k);
      }
    }
    const int q = static_cast<int>(rng.below(static_cast<uint64_t>(n - 1)));
    in_ref(s, query_start, b, o.bits + 1) = 1.0f;
    for (int j = 0; j < o.item_len; ++j) {
      for (int k = 0; k < o.bits; ++k) {
        in_ref(s, query_start + 1 + j, b, k) = bit(q, j, k);
        tgt_ref(s, answer_start + j, b, k) = bit(q + 1, j, k);
      }
      s.mask[(answer_start + j) * batch + b] = 1.0f;
    }
    in_ref(s, query_start + 1 + o.item_len, b, o.bits + 1) = 1.0f;
  }
  return s;
}

}  // namespace engram::data::tasks
