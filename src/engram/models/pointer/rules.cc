// The pointer tasks' decoding rules (see rules.h).
#include "engram/models/pointer/rules.h"

#include <algorithm>

#include "engram/core/error.h"

namespace engram::models {

void pointer_allowed(PointerTask task, int n, int s, const PointerPrefix& p, const uint8_t* used, float* mask) {
  ENGRAM_CHECK(n >= 1 && n <= s, "pointer rules: {} points padded to {}", n, s);
  std::fill(mask, mask + s + 1, 0.0f);
  float* pos = mask + 1;  // pos[j] = class j + 1
  switch (task) {
    case PointerTask::kSort:
    case PointerTask::kTsp:
      if (p.count >= n) {
        mask[kPointerEnd] = 1.0f;
      } else if (task == PointerTask::kTsp && p.count == 0) {
        pos[0] = 1.0f;  // tours start at city 0
      } else {
        for (int j = 0; j < n; ++j) pos[j] = used[j] ? 0.0f : 1.0f;
      }
      return;
    case PointerTask::kHull: {
      const int need = std::min(3, n);  // vertices before the end is allowed
      if (p.count == 0) {  // a first vertex with at least need - 1 higher indices after it
        std::fill(pos, pos + (n - need + 1), 1.0f);
        return;
      }
      bool any = false;
      for (int j = p.first + 1; j < n; ++j)
        if (!used[j]) pos[j] = 1.0f, any = true;
      if (!any || p.count >= need) mask[kPointerEnd] = 1.0f;
      return;
    }
  }
}

std::vector<int32_t> pointer_classes(std::span<const int> target) {
  std::vector<int32_t> c;
  c.reserve(target.size() + 1);
  for (int j : target) c.push_back(j + 1);
  c.push_back(kPointerEnd);
  return c;
}

std::vector<int> pointer_positions(std::span<const int32_t> classes) {
  std::vector<int> p;
  for (int32_t c : classes) {
    if (c == kPointerEnd) break;
    p.push_back(c - 1);
  }
  return p;
}

}  // namespace engram::models
