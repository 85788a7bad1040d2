// RnnEncoder: input embedding (table lookup or linear), dropout, the RNN with lengths, and the
// final state of the top layer.
// Dims: S steps, B batch, E embedding, F features, C output width.
#include "engram/nn/encoder.h"

#include "engram/core/ops.h"

namespace engram::nn {

namespace {

RnnConfig rnn_config(const RnnEncoderConfig& c, int input_size) {
  return {.cell = c.cell, .input_size = input_size, .hidden_size = c.units, .layers = c.layers,
          .bidirectional = c.bidirectional, .dropout = c.dropout};
}

}  // namespace

RnnEncoder::RnnEncoder(ParamStore& store, std::unique_ptr<Embedding> embed, const std::string& rnn_path,
                       const RnnEncoderConfig& cfg, core::Rng& rng)
    : cfg_(cfg), embed_(std::move(embed)) {
  ENGRAM_CHECK(embed_ != nullptr, "encoder '{}': no embedding table", rnn_path);
  rnn_ = std::make_unique<Rnn>(store, rnn_path, rnn_config(cfg, embed_->dim()), rng);
}

RnnEncoder::RnnEncoder(ParamStore& store, const std::string& path, int feature_dim, int embed_dim,
                       const RnnEncoderConfig& cfg, core::Rng& rng)
    : cfg_(cfg) {
  ENGRAM_CHECK(feature_dim > 0 && embed_dim > 0, "encoder '{}': feature_dim {} and embed_dim {} must be > 0", path,
               feature_dim, embed_dim);
  input_ = std::make_unique<Linear>(store, path + "/input", LinearConfig{.in_dim = feature_dim, .out_dim = embed_dim},
                                    rng);
  rnn_ = std::make_unique<Rnn>(store, path + "/rnn", rnn_config(cfg, embed_dim), rng);
}

EncodedSource RnnEncoder::encode(Graph& g, const EncoderInput& in, core::Rng* dropout_rng) const {
  const int s = in.steps, b = in.batch;
  ENGRAM_CHECK(s >= 1 && b >= 1 && static_cast<int>(in.lengths.size()) == b,
               "encoder: S={} x B={} with {} lengths (S and B must be >= 1, one length per row)", s, b,
               in.lengths.size());
  const bool dropout = dropout_rng && cfg_.dropout > 0.0f;
  const RnnOptions opt{.lengths = std::vector<int>(in.lengths.begin(), in.lengths.end()), .dropout_rng = dropout_rng};
  Var emb;  // [S, B, E]
  if (embed_) {
    ENGRAM_CHECK(!in.features.valid() && static_cast<int64_t>(in.ids.size()) == int64_t{s} * b,
                 "encoder: {} source ids for S={} x B={} (a token encoder takes ids, not features)", in.ids.size(), s,
                 b);
    emb = embed_->forward(g, std::vector<int32_t>(in.ids.begin(), in.ids.end()), {s, b});
    if (in.added.valid()) {
      ENGRAM_CHECK(in.added.shape() == emb.shape(), "encoder: added input {} for embedded tokens {}", in.added.shape(),
                   emb.shape());
      emb = emb + in.added;
    }
  } else {
    ENGRAM_CHECK(in.features.valid() && in.features.shape().rank() == 3 && in.features.shape()[0] == s &&
                     in.features.shape()[1] == b && !in.added.valid(),
                 "encoder: a feature encoder takes features [S={}, B={}, F] and nothing added", s, b);
    if (!dropout && input_->bias()) {
      // No dropout between the linear layer and the RNN: the two products are one chain,
      // multiplied in the cheaper order by Rnn::project_embedded (folded when F < E).
      Var flat = core::reshape(in.features, {s * b, in.features.shape()[2]});  // [S*B, F]
      ParamStore& store = input_->store();
      std::vector<Var> xw;
      for (int d = 0; d < rnn_->directions(); ++d) {
        Var p = rnn_->project_embedded(g, flat, store.var(g, input_->weight()), store.var(g, *input_->bias()), d);
        xw.push_back(core::reshape(p, {s, b, p.shape()[1]}));  // [S, B, G]
      }
      return finish(rnn_->forward_projected(g, xw, opt));
    }
    emb = input_->forward(g, in.features);
  }
  if (dropout) emb = core::dropout(emb, cfg_.dropout, *dropout_rng);
  return finish(rnn_->forward(g, emb, opt));  // outputs [S, B, C]
}

EncodedSource RnnEncoder::finish(const RnnOutput& r) const {
  const int dirs = rnn_->directions(), top = (cfg_.layers - 1) * dirs;
  return {r.outputs, dirs == 1 ? r.final[top].h : core::concat({r.final[top].h, r.final[top + 1].h}, 1)};
}

}  // namespace engram::nn
