// Neural Turing Machine (Graves, Wayne & Danihelka 2014): a controller (LSTM or feed-forward)
// reading from and writing to an N x M memory matrix through R read heads and W write heads, each
// addressed by content (cosine similarity, strength beta), interpolation with its previous
// weighting (gate g), a circular shift (softmax kernel over -r..r) and sharpening (gamma).
// Per step t (heads address the memory before this step's writes):
//   h_t = controller([x_t; r_{t-1}])             r_{t-1} = every read vector of the last step
//   w^h_t = address(M_{t-1}, head_h(h_t), w^h_{t-1})
//   r^h_t = sum_i w^h_t(i) M_{t-1}(i)
//   M_t = M_{t-1} o prod_h (1 - w^h_t e_h^T) + sum_h w^h_t a_h^T     e = sigmoid, a linear
//   y_t = sigmoid(W_o [h_t; r_t] + b_o)
// Initial state: memory = a small constant (default 1e-6) or a learned [N, M] matrix; every head's
// weighting one-hot on slot 0; read vectors learned [R, M]; controller state zero.
// Parameters: <path>/controller/... (nn::Rnn `l{k}/w_ih` ... or feed-forward `l{k}/weight`),
// <path>/read{h}/address, <path>/write{h}/{address,erase,add} (nn::Linear), <path>/read_init
// [R, M], <path>/memory_init [N, M] (learned init only), <path>/output.
// Dims: T steps, B batch, I inputs, K outputs, H controller width, N slots, M slot width,
// R read heads, W write heads, S = 2 shift_range + 1, P = M + S + 3 head parameters.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engram/models/ntm/seq_task.h"
#include "engram/nn/linear.h"
#include "engram/nn/rnn.h"

namespace engram::models {

enum class NtmController { kLstm, kFeedForward };
enum class NtmMemoryInit { kConstant, kLearned };

struct NtmConfig {
  int input_size = 9;    // I
  int output_size = 8;   // K
  NtmController controller = NtmController::kLstm;
  int controller_size = 100;  // H
  int controller_layers = 1;
  int memory_slots = 128;     // N
  int memory_width = 20;      // M
  int read_heads = 1;         // R
  int write_heads = 1;        // W
  int shift_range = 1;        // shifts -r .. r
  NtmMemoryInit memory_init = NtmMemoryInit::kConstant;
  float memory_init_value = 1e-6f;
  bool fused = true;          // fused addressing / read / write ops (false: composed reference ops)

  template <class V>
  void visit(V& v) {
    v("input_size", input_size, "input channels (set from the task)");
    v("output_size", output_size, "output channels (set from the task)");
    v("controller", controller, "lstm|feedforward");
    v("controller_size", controller_size, "controller units per layer");
    v("controller_layers", controller_layers, "controller layers");
    v("memory_slots", memory_slots, "memory rows N");
    v("memory_width", memory_width, "memory row width M");
    v("read_heads", read_heads, "read heads");
    v("write_heads", write_heads, "write heads");
    v("shift_range", shift_range, "allowed shifts -r..r");
    v("memory_init", memory_init, "constant|learned initial memory");
    v("memory_init_value", memory_init_value, "value of the constant initial memory");
    v("fused", fused, "fused addressing/read/write ops (false: composed reference)");
  }
};

class Ntm : public nn::Module, public SeqModel {
 public:
  Ntm(nn::ParamStore& store, std::string path, const NtmConfig& cfg, core::Rng& rng);

  SeqOutput forward(Graph& g, Var x, const std::vector<int32_t>& rows, SeqTrace* trace = nullptr) const override;
  int input_size() const override { return cfg_.input_size; }
  int output_size() const override { return cfg_.output_size; }
  const NtmConfig& config() const { return cfg_; }

 private:
  Var controller_step(Graph& g, Var in, std::vector<nn::RnnState>& state) const;  // [B, H]

  NtmConfig cfg_;
  std::unique_ptr<nn::Rnn> lstm_;             // LSTM controller, input I + R*M
  std::vector<nn::Linear> feedforward_;       // feed-forward controller layers (tanh)
  std::vector<nn::Linear> read_address_;      // R x (H -> P)
  std::vector<nn::Linear> write_address_;     // W x (H -> P)
  std::vector<nn::Linear> erase_;             // W x (H -> M)
  std::vector<nn::Linear> add_;               // W x (H -> M)
  std::unique_ptr<nn::Linear> output_;        // H + R*M -> K
  nn::ParamId read_init_;                     // [R * M]
  nn::ParamId memory_init_ = -1;              // [N, M] when learned
};

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::NtmController> {
  static constexpr std::pair<engram::models::NtmController, const char*> items[] = {
      {engram::models::NtmController::kLstm, "lstm"}, {engram::models::NtmController::kFeedForward, "feedforward"}};
};
template <>
struct engram::io::EnumNames<engram::models::NtmMemoryInit> {
  static constexpr std::pair<engram::models::NtmMemoryInit, const char*> items[] = {
      {engram::models::NtmMemoryInit::kConstant, "constant"}, {engram::models::NtmMemoryInit::kLearned, "learned"}};
};
