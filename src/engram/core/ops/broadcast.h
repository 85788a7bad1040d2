// Broadcasting helper for binary element-wise ops (numpy rules, shapes aligned at the right).
// Internal to core/ops.
#pragma once

#include "engram/core/shape.h"

namespace engram::core::ops_detail {

struct Broadcast {
  Shape out;
  int d[4];       // out dims padded to rank 4 (leading 1s)
  int64_t sa[4];  // element strides of a for each padded out dim (0 where broadcast)
  int64_t sb[4];
  bool same;      // a, b and out have identical shapes
  bool b_scalar;  // b has one element and a == out
};

Broadcast broadcast(const Shape& a, const Shape& b);

// Calls f(ia, ib, io) for every output element (flat indices into a, b, out).
template <class F>
inline void for_each_broadcast(const Broadcast& bc, F&& f) {
  int64_t io = 0;
  for (int i0 = 0; i0 < bc.d[0]; ++i0)
    for (int i1 = 0; i1 < bc.d[1]; ++i1)
      for (int i2 = 0; i2 < bc.d[2]; ++i2) {
        int64_t ia = i0 * bc.sa[0] + i1 * bc.sa[1] + i2 * bc.sa[2];
        int64_t ib = i0 * bc.sb[0] + i1 * bc.sb[1] + i2 * bc.sb[2];
        for (int i3 = 0; i3 < bc.d[3]; ++i3, ++io) f(ia + i3 * bc.sa[3], ib + i3 * bc.sb[3], io);
      }
}

}  // namespace engram::core::ops_detail
