// NTM addressing, read and write: thin dispatch to the fused ops and their composed references.
// Dims: B batch, N memory slots, M slot width, S shift-kernel size, P = M + S + 3.
#include "engram/nn/memory/addressing.h"

#include "engram/core/ops.h"
#include "engram/core/ops/ntm_ops.h"

namespace engram::nn {

namespace c = engram::core;

Var address(Var memory, Var head, Var w_prev, bool fused) {
  return fused ? c::ntm_address(memory, head, w_prev) : address_composed(memory, head, w_prev);
}

Var address_composed(Var memory, Var head, Var w_prev) {
  const int m = memory.shape()[2];
  const int s = head.shape()[1] - m - 3;
  ENGRAM_CHECK(memory.shape().rank() == 3 && head.shape().rank() == 2 && s >= 1 && s % 2 == 1,
               "address: needs memory [B, N, M] and head [B, M + S + 3] with S odd, got {} and {}",
               memory.shape(), head.shape());
  std::vector<Var> p = c::split(head, {m, 1, 1, s, 1}, 1);      // key [B, M], then [B, 1] / [B, S]
  Var beta = c::softplus(p[1]);                                 // [B, 1]
  Var gate = c::sigmoid(p[2]);                                  // [B, 1]
  Var shift = c::softmax(p[3]);                                 // [B, S]
  Var gamma = c::add_scalar(c::softplus(p[4]), 1.0f);           // [B, 1]
  Var wc = c::softmax(c::mul(c::cosine_rows(memory, p[0], c::kNtmCosineEps), beta));  // [B, N]
  Var wg = c::add(c::mul(gate, wc), c::mul(c::one_minus(gate), w_prev));             // [B, N]
  return c::sharpen(c::circular_conv(wg, shift), gamma, c::kNtmSharpenEps);            // [B, N]
}

Var read(Var w, Var memory, bool fused) { return fused ? c::memory_read(w, memory) : read_composed(w, memory); }

Var read_composed(Var w, Var memory) {
  const c::Shape& sm = memory.shape();
  ENGRAM_CHECK(sm.rank() == 3, "read: memory must be [B, N, M], got {}", sm);
  return c::reshape(c::bmm(c::reshape(w, {sm[0], 1, sm[1]}), memory), {sm[0], sm[2]});  // [B, M]
}

Var write(Var memory, Var w, Var erase, Var add, bool fused) {
  return fused ? c::memory_write(memory, w, erase, add) : write_composed(memory, w, erase, add);
}

Var write_composed(Var memory, Var w, Var erase, Var add) {
  const c::Shape& sm = memory.shape();
  ENGRAM_CHECK(sm.rank() == 3 && (erase.valid() || add.valid()), "write: needs memory [B, N, M] and erase or add");
  Var wcol = c::reshape(w, {sm[0], sm[1], 1});  // [B, N, 1]
  Var out = memory;
  if (erase.valid()) out = c::mul(out, c::one_minus(c::bmm(wcol, c::reshape(erase, {sm[0], 1, sm[2]}))));
  if (add.valid()) out = c::add(out, c::bmm(wcol, c::reshape(add, {sm[0], 1, sm[2]})));
  return out;  // [B, N, M]
}

}  // namespace engram::nn
