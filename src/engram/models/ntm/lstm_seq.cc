// LSTM baseline: the whole sequence through nn::Rnn (one input GEMM per layer, fused cells),
// then one output GEMM over the scored rows only.
// Dims: T steps, B batch, I inputs, K outputs, H hidden width, R scored rows.
#include "engram/models/ntm/lstm_seq.h"

#include <Eigen/Core>

#include "engram/core/ops.h"

namespace engram::models {

LstmSeq::LstmSeq(nn::ParamStore& store, std::string path, const LstmSeqConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), cfg_(cfg) {
  ENGRAM_CHECK(cfg.input_size >= 1 && cfg.output_size >= 1 && cfg.hidden_size >= 1 && cfg.layers >= 1,
               "lstm baseline: input_size {}, output_size {}, hidden_size {}, layers {} must be >= 1", cfg.input_size,
               cfg.output_size, cfg.hidden_size, cfg.layers);
  lstm_ = std::make_unique<nn::Rnn>(store, child("lstm"),
                                    nn::RnnConfig{.cell = nn::CellKind::kLstm, .input_size = cfg.input_size,
                                                  .hidden_size = cfg.hidden_size, .layers = cfg.layers},
                                    rng);
  output_ = std::make_unique<nn::Linear>(store, child("output"),
                                         nn::LinearConfig{.in_dim = cfg.hidden_size, .out_dim = cfg.output_size}, rng);
}

SeqOutput LstmSeq::forward(Graph& g, Var x, const std::vector<int32_t>& rows, SeqTrace*) const {
  const core::Shape& sx = x.shape();
  ENGRAM_CHECK(sx.rank() == 3 && sx[2] == cfg_.input_size, "lstm baseline: input {} must be [T, B, {}]", sx,
               cfg_.input_size);
  const int64_t total = static_cast<int64_t>(sx[0]) * sx[1];
  for (size_t i = 0; i < rows.size(); ++i)
    ENGRAM_CHECK(rows[i] >= 0 && rows[i] < total && (i == 0 || rows[i] > rows[i - 1]),
                 "lstm baseline: output rows must be ascending in [0, {}), got {} at {}", total, rows[i], i);
  Var out = core::reshape(lstm_->forward(g, x).outputs, {static_cast<int>(total), cfg_.hidden_size});  // [T*B, H]
  if (static_cast<int64_t>(rows.size()) != total) out = core::select_rows(out, rows);                 // [R, H]
  Var logits = output_->forward(g, out);                                                              // [R, K]
  if (!Eigen::Map<const Eigen::ArrayXf>(logits.data(), logits.numel()).allFinite())
    return {Var{}, NonFinite{sx[0] - 1, "lstm"}};
  return {logits, std::nullopt};
}

}  // namespace engram::models
