// Initialisers. Orthogonal uses Eigen's Householder QR with the sign fix of Saxe et al.
#include "engram/nn/init.h"

#include <Eigen/QR>
#include <cmath>
#include <utility>

namespace engram::nn::init {

namespace {
thread_local bool skip_init = false;
}  // namespace

SkipOnThisThread::SkipOnThisThread() : was_(std::exchange(skip_init, true)) {}
SkipOnThisThread::~SkipOnThisThread() { skip_init = was_; }

void constant(ParamStore& s, ParamId id, float v) {
  if (!skip_init) s.value(id).fill(v);
}

void uniform(ParamStore& s, ParamId id, core::Rng& rng, float lo, float hi) {
  if (skip_init) return;
  for (float& x : s.value(id)) x = rng.uniform(lo, hi);
}

void normal(ParamStore& s, ParamId id, core::Rng& rng, float mean, float stddev) {
  if (skip_init) return;
  for (float& x : s.value(id)) x = mean + stddev * static_cast<float>(rng.normal());
}

void glorot_uniform(ParamStore& s, ParamId id, core::Rng& rng, float gain) {
  const Shape& sh = s.shape(id);
  const double fan_out = sh.rank() >= 2 ? sh[0] : sh.numel();
  const double fan_in = sh.rank() >= 2 ? sh.numel() / sh[0] : sh.numel();
  const float a = gain * static_cast<float>(std::sqrt(6.0 / (fan_in + fan_out)));
  uniform(s, id, rng, -a, a);
}

void orthogonal(ParamStore& s, ParamId id, core::Rng& rng, float gain) {
  if (skip_init) return;
  Tensor t = s.value(id);
  ENGRAM_CHECK(t.shape.rank() == 2, "orthogonal init needs a matrix, got {}", t.shape);
  const int rows = t.shape[0], cols = t.shape[1];
  for (int r0 = 0; r0 < rows; r0 += cols) {
    const int block = std::min(cols, rows - r0);
    Eigen::MatrixXd a(cols, cols);
    for (int i = 0; i < cols; ++i)
      for (int j = 0; j < cols; ++j) a(i, j) = rng.normal();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
    Eigen::MatrixXd q = qr.householderQ();
    Eigen::MatrixXd r = qr.matrixQR().triangularView<Eigen::Upper>();
    for (int j = 0; j < cols; ++j)
      if (r(j, j) < 0) q.col(j) *= -1.0;
    for (int i = 0; i < block; ++i)
      for (int j = 0; j < cols; ++j) t.at(r0 + i, j) = gain * static_cast<float>(q(i, j));
  }
}

}  // namespace engram::nn::init
