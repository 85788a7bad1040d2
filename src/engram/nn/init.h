// Parameter initialisers. Each fills one parameter of a ParamStore from an explicit Rng.
// Fan-in / fan-out of a [N, K] weight are K / N (PyTorch's layout: rows = outputs).
#pragma once

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn::init {

// While one lives on this thread, every initialiser below leaves the parameter as it is (0 in a
// fresh store) and draws nothing: for a model whose every parameter is then read from a
// checkpoint (models/loading.h). Nests.
class SkipOnThisThread {
 public:
  SkipOnThisThread();
  ~SkipOnThisThread();
  SkipOnThisThread(const SkipOnThisThread&) = delete;
  SkipOnThisThread& operator=(const SkipOnThisThread&) = delete;

 private:
  bool was_;
};

void constant(ParamStore& s, ParamId id, float v);
void uniform(ParamStore& s, ParamId id, core::Rng& rng, float lo, float hi);
void normal(ParamStore& s, ParamId id, core::Rng& rng, float mean, float stddev);
// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
void glorot_uniform(ParamStore& s, ParamId id, core::Rng& rng, float gain = 1.0f);
// Each [H, H] block of a [k*H, H] weight made orthogonal (QR of a Gaussian matrix), times gain.
void orthogonal(ParamStore& s, ParamId id, core::Rng& rng, float gain = 1.0f);

}  // namespace engram::nn::init
