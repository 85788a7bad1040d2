// Encoders: a source sequence -> the memory a decoder attends over ([S, B, C], time-major, zero
// at padded steps) and the top layer's final state [B, C] that starts the decoder. The input is
// either token ids looked up in an embedding table (text) or feature vectors through a linear
// layer (point coordinates for pointer networks, audio frames for speech); a multi-layer,
// optionally bidirectional RNN runs over the embedded inputs. Differentiable in every parameter
// and in feature inputs.
// Dims: S source steps, B batch, E input embedding width, F feature width, U units per direction,
// D directions, C = D U encoder output width.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engram/core/rng.h"
#include "engram/nn/embedding.h"
#include "engram/nn/linear.h"
#include "engram/nn/rnn.h"

namespace engram::nn {

// One batch of sources. Exactly one of ids / features is given, as the encoder's input kind.
struct EncoderInput {
  int steps = 0;                     // S
  int batch = 0;                     // B
  std::span<const int32_t> ids{};    // [S, B] token ids, time-major (token input)
  Var features{};                    // [S, B, F] time-major (feature input)
  Var added{};                       // [S, B, E] optional (token input): added to the embedded tokens
  std::span<const int32_t> lengths;  // [B] true lengths in [0, S]
};

struct EncodedSource {
  Var outputs;    // [S, B, C] zero at padded steps
  Var final_top;  // [B, C] the top layer's last state, directions concatenated (forward | reverse)
};

// The interface a decoder needs from an encoder.
class Encoder {
 public:
  virtual ~Encoder() = default;
  // `dropout_rng` null = no dropout (inference).
  virtual EncodedSource encode(Graph& g, const EncoderInput& in, core::Rng* dropout_rng) const = 0;
  virtual int output_width() const = 0;  // C
};

struct RnnEncoderConfig {
  CellKind cell = CellKind::kGru;
  int units = 0;               // U per direction
  int layers = 1;
  bool bidirectional = true;
  float dropout = 0.0f;        // on the embedded inputs and between layers, in [0, 1)
};

// An RNN over embedded tokens or projected feature vectors.
class RnnEncoder final : public Encoder {
 public:
  // Token input: `embed` [V, E] (built by the caller, which fixes where its parameters and their
  // initialisation fall); the RNN's parameters go under `rnn_path`.
  RnnEncoder(ParamStore& store, std::unique_ptr<Embedding> embed, const std::string& rnn_path,
             const RnnEncoderConfig& cfg, core::Rng& rng);
  // Feature input: `<path>/input` [E, F] + bias embeds each feature vector, `<path>/rnn` the RNN.
  // Without dropout on the embedded inputs, the linear layer and the RNN's first input product
  // are one chain of products (Rnn::project_embedded: folded when F < E).
  RnnEncoder(ParamStore& store, const std::string& path, int feature_dim, int embed_dim, const RnnEncoderConfig& cfg,
             core::Rng& rng);

  EncodedSource encode(Graph& g, const EncoderInput& in, core::Rng* dropout_rng) const override;
  int output_width() const override { return rnn_->output_size(); }
  const Embedding* embedding() const { return embed_.get(); }  // token input only
  const Rnn& rnn() const { return *rnn_; }

 private:
  EncodedSource finish(const RnnOutput& r) const;  // the outputs and the top layer's final state

  RnnEncoderConfig cfg_;
  std::unique_ptr<Embedding> embed_;  // token input
  std::unique_ptr<Linear> input_;     // feature input [E, F]
  std::unique_ptr<Rnn> rnn_;          // E -> D x U
};

}  // namespace engram::nn
