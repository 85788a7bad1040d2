// The speech recognizer's model config (Chorowski et al. 2015, "Attention-Based Models for
// Speech Recognition", at FSDD scale), saved as a checkpoint's config.yaml. The front end is part
// of it (features.*, stack), so a loaded model computes the features it was trained on.
// Time reduction, two kinds that combine: a fixed frame stacking before the encoder (`stack`
// consecutive log-mel frames concatenated into one input vector, T -> ceil(T / stack)), and
// `pyramid` pyramidal layers after it (Listen, Attend and Spell): each concatenates pairs of the
// layer below's outputs ([S, B, C] -> [ceil(S/2), B, 2C], a reshape / permute composition, odd S
// zero-padded) and runs one more (bidirectional) RNN layer over them.
// Tokens: the digits 0-9 are ids 0-9, <eos> = 10 (the V = 11 output classes), <go> = 11 (input only).
// Dims: F feature width (features.dim() * stack), E input projection, U encoder units,
// H decoder hidden, A attention width, K location filters, W filter width, P readout width.
#pragma once

#include <utility>

#include "engram/data/audio.h"
#include "engram/io/config.h"

namespace engram::models {

enum class SpeechAttention { kAdditive, kLocation };
enum class SpeechCell { kGru, kLstm };

inline constexpr int kSpeechEos = 10;
inline constexpr int kSpeechGo = 11;
inline constexpr int kSpeechClasses = 11;  // V: digits + <eos>

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::models::SpeechAttention> {
  static constexpr std::pair<engram::models::SpeechAttention, const char*> items[] = {
      {engram::models::SpeechAttention::kAdditive, "additive"},
      {engram::models::SpeechAttention::kLocation, "location"}};
};
template <>
struct engram::io::EnumNames<engram::models::SpeechCell> {
  static constexpr std::pair<engram::models::SpeechCell, const char*> items[] = {
      {engram::models::SpeechCell::kGru, "gru"}, {engram::models::SpeechCell::kLstm, "lstm"}};
};

namespace engram::models {

struct SpeechConfig {
  data::audio::FeatureConfig features;  // log-mel front end (data/audio.h)
  int stack = 3;                        // frames stacked per encoder input (time reduction)
  int embed_dim = 64;                   // E: linear projection of each stacked frame
  int encoder_units = 64;               // U per direction
  int encoder_layers = 1;
  int pyramid = 0;                      // pyramidal layers after the encoder (each halves the steps)
  bool bidirectional = true;
  SpeechCell cell = SpeechCell::kGru;   // encoder and decoder
  SpeechAttention attention = SpeechAttention::kLocation;
  int attn_dim = 32;                    // A
  int conv_filters = 4;                 // K: location-aware filters over the previous alpha
  int conv_width = 5;                   // W (odd): taps of each filter
  int token_dim = 16;                   // decoder input embedding of the previous token
  int decoder_hidden = 64;              // H
  int readout_dim = 64;                 // P
  float dropout = 0.0f;                 // training only: on the projected frames and the decoder's top state

  template <class V>
  void visit(V& v) {
    v("features", features, "log-mel filterbank front end");
    v("stack", stack, "consecutive frames concatenated into one encoder input (time reduction)");
    v("embed_dim", embed_dim, "linear projection width of a stacked frame");
    v("encoder_units", encoder_units, "encoder units per direction");
    v("encoder_layers", encoder_layers, "encoder RNN layers");
    v("pyramid", pyramid, "pyramidal RNN layers after the encoder, each over concatenated pairs of steps (x1/2)");
    v("bidirectional", bidirectional, "bidirectional encoder");
    v("cell", cell, "gru | lstm (encoder and decoder)");
    v("attention", attention, "additive | location (previous alpha convolved with a filter bank)");
    v("attn_dim", attn_dim, "additive attention width");
    v("conv_filters", conv_filters, "location: number of 1-D filters over the previous alpha");
    v("conv_width", conv_width, "location: taps of each filter (odd)");
    v("token_dim", token_dim, "embedding width of the previous output token");
    v("decoder_hidden", decoder_hidden, "decoder units");
    v("readout_dim", readout_dim, "readout width before the digit softmax");
    v("dropout", dropout, "training dropout on the projected input frames, between encoder layers and on the decoder state before the readout, in [0, 1)");
  }
  // Errors name the first invalid field.
  void validate() const;
  int input_dim() const { return features.dim() * stack; }  // F
};

}  // namespace engram::models
