// The LSTM baseline of the NTM paper: a stack of LSTM layers reading the binary input sequence
// and a sigmoid output layer on the top layer's state at every step (the paper: 3 layers of 256
// units for copy). Parameters: <path>/lstm/l{k}/... (nn::Rnn), <path>/output.
// Dims: T steps, B batch, I inputs, K outputs, H hidden width, L layers, R scored rows.
#pragma once

#include <memory>
#include <string>

#include "engram/models/ntm/seq_task.h"
#include "engram/nn/linear.h"
#include "engram/nn/rnn.h"

namespace engram::models {

struct LstmSeqConfig {
  int input_size = 9;   // I
  int output_size = 8;  // K
  int hidden_size = 256;  // H
  int layers = 3;         // L

  template <class V>
  void visit(V& v) {
    v("input_size", input_size, "input channels (set from the task)");
    v("output_size", output_size, "output channels (set from the task)");
    v("hidden_size", hidden_size, "LSTM units per layer");
    v("layers", layers, "LSTM layers");
  }
};

class LstmSeq : public nn::Module, public SeqModel {
 public:
  LstmSeq(nn::ParamStore& store, std::string path, const LstmSeqConfig& cfg, core::Rng& rng);

  SeqOutput forward(Graph& g, Var x, const std::vector<int32_t>& rows, SeqTrace* trace = nullptr) const override;
  int input_size() const override { return cfg_.input_size; }
  int output_size() const override { return cfg_.output_size; }

 private:
  LstmSeqConfig cfg_;
  std::unique_ptr<nn::Rnn> lstm_;      // I -> H, L layers
  std::unique_ptr<nn::Linear> output_; // H -> K
};

}  // namespace engram::models
