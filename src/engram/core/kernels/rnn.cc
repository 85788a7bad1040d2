// Per-row LSTM / GRU gate kernels (see rnn.h). Transcendentals through Eigen's vectorised
// rational approximations (a few ulp from std::exp / std::tanh).
#include "engram/core/kernels/rnn.h"

#include <Eigen/Core>

namespace engram::core::kernels {

namespace {

using ArrayMap = Eigen::Map<Eigen::ArrayXf>;
using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

inline void sigmoid_inplace(float* p, int n) { ArrayMap(p, n) = ArrayMap(p, n).logistic(); }
inline void tanh_inplace(float* p, int n) { ArrayMap(p, n) = ArrayMap(p, n).tanh(); }

}  // namespace

void lstm_forward_row(float* a, const float* c_prev, float* h_out, float* c_out, float* tc, int hid) {
  sigmoid_inplace(a, 2 * hid);        // i, f
  tanh_inplace(a + 2 * hid, hid);     // g
  sigmoid_inplace(a + 3 * hid, hid);  // o
  const float *ig = a, *fg = a + hid, *gg = a + 2 * hid, *og = a + 3 * hid;
  for (int j = 0; j < hid; ++j) c_out[j] = fg[j] * c_prev[j] + ig[j] * gg[j];
  ArrayMap(tc, hid) = ConstArrayMap(c_out, hid).tanh();
  for (int j = 0; j < hid; ++j) h_out[j] = og[j] * tc[j];
}

// dct = dc + dh o (1 - tc^2)
// da = (dct g i(1-i), dct c_prev f(1-f), dct i (1-g^2), dh tc o(1-o));  dc_prev += dct f
void lstm_backward_row(const float* a, const float* tc, const float* c_prev, const float* dh, const float* dc,
                       float* da, float* dc_prev, int hid) {
  const float *ig = a, *fg = a + hid, *gg = a + 2 * hid, *og = a + 3 * hid;
  for (int j = 0; j < hid; ++j) {
    const float dct = dc[j] + dh[j] * og[j] * (1.0f - tc[j] * tc[j]);
    da[j] = dct * gg[j] * ig[j] * (1.0f - ig[j]);
    da[hid + j] = dct * c_prev[j] * fg[j] * (1.0f - fg[j]);
    da[2 * hid + j] = dct * ig[j] * (1.0f - gg[j] * gg[j]);
    da[3 * hid + j] = dh[j] * tc[j] * og[j] * (1.0f - og[j]);
    if (dc_prev) dc_prev[j] += dct * fg[j];
  }
}

void gru_forward_row(float* s, const float* x_n, const float* h_prev, float* n, float* h_out, int hid) {
  sigmoid_inplace(s, 2 * hid);  // r, z
  const float *rg = s, *zg = s + hid, *hn = s + 2 * hid;
  for (int j = 0; j < hid; ++j) n[j] = x_n[j] + rg[j] * hn[j];
  tanh_inplace(n, hid);
  for (int j = 0; j < hid; ++j) h_out[j] = n[j] + zg[j] * (h_prev[j] - n[j]);
}

// dan = dy (1-z)(1-n^2);  dr = dan hn r(1-r);  dz = dy (h - n) z(1-z)
// dgh = (dr, dz, dan r);  dgx = (dr, dz, dan);  dh_prev += dy z
void gru_backward_row(const float* s, const float* n, const float* h_prev, const float* dy, float* dgh, float* dgx,
                      float* dh_prev, int hid) {
  const float *rg = s, *zg = s + hid, *hn = s + 2 * hid;
  for (int j = 0; j < hid; ++j) {
    const float dan = dy[j] * (1.0f - zg[j]) * (1.0f - n[j] * n[j]);
    const float dr = dan * hn[j] * rg[j] * (1.0f - rg[j]);
    const float dz = dy[j] * (h_prev[j] - n[j]) * zg[j] * (1.0f - zg[j]);
    dgh[j] = dr;
    dgh[hid + j] = dz;
    dgh[2 * hid + j] = dan * rg[j];
    dgx[j] = dr;
    dgx[hid + j] = dz;
    dgx[2 * hid + j] = dan;
    if (dh_prev) dh_prev[j] += dy[j] * zg[j];
  }
}

}  // namespace engram::core::kernels
