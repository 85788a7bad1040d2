// IBM Model 1 EM (see ibm1.h).
#include "engram/data/ibm1.h"

#include <algorithm>
#include <cmath>

#include "engram/core/error.h"

namespace engram::data {
namespace {

// d(i, j) for source position i of s and target position j of n (ibm1.h); 1 when lambda = 0.
double diagonal_prior(double lambda, size_t i, size_t s, size_t j, size_t n) {
  if (lambda == 0) return 1.0;
  const double at = (static_cast<double>(i) + 0.5) / static_cast<double>(s);
  return std::exp(-lambda * std::abs(at - (static_cast<double>(j) + 0.5) / static_cast<double>(n)));
}

}  // namespace

Ibm1 Ibm1::train(std::span<const Example> pairs, int iterations, double diagonal) {
  ENGRAM_CHECK(iterations >= 1, "IBM Model 1: iterations {} must be >= 1", iterations);
  ENGRAM_CHECK(std::isfinite(diagonal) && diagonal >= 0, "IBM Model 1: diagonal tension {} must be finite and >= 0",
               diagonal);
  Ibm1 m;
  m.diagonal_ = diagonal;
  int32_t max_f = -1;
  for (const Example& p : pairs) {
    if (p.src.empty() || p.tgt.empty()) continue;
    for (int32_t f : p.src) {
      ENGRAM_CHECK(f >= 0, "IBM Model 1: source id {} < 0", f);
      max_f = std::max(max_f, f);
      for (int32_t e : p.tgt) {
        ENGRAM_CHECK(e >= 0, "IBM Model 1: target id {} < 0", e);
        m.keys_.push_back(key(f, e));
      }
    }
  }
  std::sort(m.keys_.begin(), m.keys_.end());
  m.keys_.erase(std::unique(m.keys_.begin(), m.keys_.end()), m.keys_.end());
  m.keys_.shrink_to_fit();
  // Each pair's (f_i, e_j) as an index into keys_, row j of S entries, in pair order.
  std::vector<uint32_t> cell;
  for (const Example& p : pairs) {
    if (p.src.empty() || p.tgt.empty()) continue;
    for (int32_t e : p.tgt)
      for (int32_t f : p.src)
        cell.push_back(static_cast<uint32_t>(std::lower_bound(m.keys_.begin(), m.keys_.end(), key(f, e)) -
                                             m.keys_.begin()));
  }
  m.t_.assign(m.keys_.size(), 1.0f);  // uniform (any constant gives uniform first posteriors)
  std::vector<double> count(m.keys_.size()), total(static_cast<size_t>(max_f + 1)), w;
  for (int it = 0; it < iterations; ++it) {
    std::fill(count.begin(), count.end(), 0.0);
    std::fill(total.begin(), total.end(), 0.0);
    size_t at = 0;
    for (const Example& p : pairs) {
      if (p.src.empty() || p.tgt.empty()) continue;
      const size_t s = p.src.size(), n = p.tgt.size();
      w.resize(s);
      for (size_t j = 0; j < n; ++j, at += s) {
        double z = 0;
        for (size_t i = 0; i < s; ++i) z += w[i] = m.t_[cell[at + i]] * diagonal_prior(diagonal, i, s, j, n);
        if (!(z > 0)) continue;  // every t(e_j | f_i) of the row underflowed: the row counts nothing
        for (size_t i = 0; i < s; ++i) {
          const double c = w[i] / z;
          count[cell[at + i]] += c;
          total[static_cast<size_t>(p.src[i])] += c;
        }
      }
    }
    for (size_t k = 0; k < m.keys_.size(); ++k)
      m.t_[k] = static_cast<float>(count[k] / total[static_cast<size_t>(m.keys_[k] >> 32)]);
  }
  return m;
}

double Ibm1::prob(int32_t f, int32_t e) const {
  if (f < 0 || e < 0) return 0.0;
  const auto it = std::lower_bound(keys_.begin(), keys_.end(), key(f, e));
  return it != keys_.end() && *it == key(f, e) ? t_[static_cast<size_t>(it - keys_.begin())] : 0.0;
}

std::vector<float> Ibm1::posterior(std::span<const int32_t> src, std::span<const int32_t> tgt) const {
  const size_t s = src.size();
  std::vector<float> out(tgt.size() * s);
  if (s == 0) return out;
  std::vector<double> w(s);  // in double: t·d can be far below float's range before it is normalised
  for (size_t j = 0; j < tgt.size(); ++j) {
    float* row = out.data() + j * s;
    double z = 0;
    for (size_t i = 0; i < s; ++i) z += w[i] = prob(src[i], tgt[j]) * diagonal_prior(diagonal_, i, s, j, tgt.size());
    for (size_t i = 0; i < s; ++i) row[i] = z > 0 ? static_cast<float>(w[i] / z) : 1.0f / static_cast<float>(s);
  }
  return out;
}

}  // namespace engram::data
