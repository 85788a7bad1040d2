// Every parameter of a store as a finite-difference target (core/grad_check.h): the gradient
// checks of modules and models list their parameters this one way.
#pragma once

#include <vector>

#include "engram/core/grad_check.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

inline std::vector<core::GradTarget> grad_targets(ParamStore& store) {
  std::vector<core::GradTarget> t;
  for (ParamId id = 0; id < store.count(); ++id)
    t.push_back({store.name(id), store.value(id).data, store.grad(id).data, store.shape(id).numel()});
  return t;
}

}  // namespace engram::nn
