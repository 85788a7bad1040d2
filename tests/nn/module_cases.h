// The module gradient-check table: one row per module configuration. A row builds its module on
// a fresh ParamStore (random init from a fixed seed), and checks the gradient of every parameter
// and of every differentiable input against finite differences.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engram/core/grad_check.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

struct ModuleCase {
  std::string name;  // e.g. "gru/bidirectional/masked"
  // Builds the module's parameters into `store` (initialised from rng) and returns a function
  // computing the module's output from the inputs (leaves over the given input buffers).
  std::function<std::function<Var(Graph&, const std::vector<Var>&)>(ParamStore&, core::Rng&)> build;
  std::vector<core::OpInput> inputs;  // differentiable inputs (may be empty)
  double tol = 1e-2;
  core::GradCheckOptions opt = {};
};

std::vector<ModuleCase> basic_module_cases();  // Linear, Embedding, Attention, Dropout, LayerNorm
std::vector<ModuleCase> rnn_module_cases();    // LSTM / GRU layers
std::vector<ModuleCase> memn2n_module_cases(); // MemN2N hop (PE / TE, both tyings; memn2n_hop_test.cc)
std::vector<ModuleCase> seq_module_cases();    // encoder, attention decoder, pointer output, score features
std::vector<ModuleCase> copy_module_cases();   // pointer-generator copy mixture (module_cases_copy.cc)

}  // namespace engram::nn
