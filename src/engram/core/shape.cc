// Shape printing.
#include "engram/core/shape.h"

namespace engram::core {

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

}  // namespace engram::core
