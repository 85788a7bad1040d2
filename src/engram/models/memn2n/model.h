// End-To-End Memory Network (Sukhbaatar et al. 2015) for bAbI question answering: K hops of
// nn::Memn2nHop over the most recent sentences of a story, question embedding u¹ = B q,
// u^{k+1} = u^k + o^k (adjacent tying: A^{k+1} = C^k, B = A¹, W = C^K) or H u^k + o^k
// (layer-wise tying: one A, one C for every hop, separate B and W), answer â = softmax(W u^{K+1}).
// Also the data side: bAbI samples encoded with a vocabulary, padded batches with temporal
// indices (and random-noise time shifts for training), and per-task evaluation.
// Dims: B batch, N memory slots, W words per sentence, Wq question words, V vocab, D embedding
// width, K hops.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engram/core/graph.h"
#include "engram/core/rng.h"
#include "engram/data/babi.h"
#include "engram/data/vocab.h"
#include "engram/io/config.h"
#include "engram/models/model_set.h"
#include "engram/nn/memory/memn2n_hop.h"
#include "engram/nn/param_store.h"

namespace engram::models {

using core::Graph;
using core::Var;

enum class WeightTying { kAdjacent, kLayerWise };

struct Memn2nConfig {
  int vocab = 0;          // V (set from the data's vocabulary)
  int dim = 20;           // D (the paper: 20 per task, 50 joint)
  int hops = 3;           // K
  int memory_size = 50;   // most recent sentences kept (and temporal rows)
  nn::SentenceEncoding encoding = nn::SentenceEncoding::kPosition;
  bool temporal = true;   // TE
  WeightTying tying = WeightTying::kAdjacent;
  float init_stddev = 0.1f;
  int sentence_length = 0;  // J of encoding pe_global (set from the data: longest sentence + 1 with TE)
  // Pad every memory to memory_size slots; the empty ones (zero embeddings, score 0) stay in the
  // memory softmax as a "nothing" option, as in the authors' code and its ports. false: only the
  // batch's largest memory is padded to and empty slots are masked out.
  bool null_slots = false;

  template <class V>
  void visit(V& v) {
    v("vocab", vocab, "vocabulary size V (set from the data)");
    v("dim", dim, "embedding width D");
    v("hops", hops, "memory hops K");
    v("memory_size", memory_size, "most recent sentences kept as memory");
    v("encoding", encoding, "sentence encoding: bow | pe (position encoding) | pe_global (the authors' code's PE)");
    v("temporal", temporal, "temporal encoding (TE)");
    v("tying", tying, "weight tying: adjacent | layerwise");
    v("init_stddev", init_stddev, "initial weights ~ N(0, stddev^2)");
    v("sentence_length", sentence_length, "J of pe_global (set from the data)");
    v("null_slots", null_slots, "pad memories to memory_size; empty slots stay in the softmax with score 0");
  }
};

// ---- data -----------------------------------------------------------------------------------

// One question, its words encoded; the memory is a window of a shared encoded story.
struct Memn2nSample {
  int32_t story = 0;                // index into Memn2nDataset::stories
  int32_t begin = 0, end = 0;       // memory window [begin, end) of the story's sentences
  std::vector<int32_t> query;       // [Wq] word ids
  int32_t answer = 0;               // vocabulary id of the (single-token) answer
  std::vector<int32_t> supporting;  // window positions (0 = oldest) of the supporting facts
  int32_t task = 0;                 // bAbI task 1..20 (0 = other)
};

struct Memn2nDataset {
  std::vector<std::vector<std::vector<int32_t>>> stories;  // [story][sentence][word] ids
  std::vector<Memn2nSample> samples;
};

// The longest memory sentence or question (in words) of every sample given.
int longest_babi_sentence(const std::vector<const std::vector<data::BabiSample>*>& sets);
// Vocabulary of memory, question and answer tokens of every sample given.
data::Vocab build_babi_vocab(const std::vector<const std::vector<data::BabiSample>*>& sets);
// Appends `samples` (of bAbI task `task`) to `out`; each story shared by several samples is
// encoded once. Unknown words map to <unk>; an answer missing from the vocabulary is an error.
void encode_babi(const std::vector<data::BabiSample>& samples, int task, const data::Vocab& vocab,
                 Memn2nDataset* out);

// One padded batch. Memory slots are filled oldest first (slot 0) with the most recent
// memory_size sentences of each window; time[b, n] counts back from the most recent sentence
// (0); empty slots have time -1, mask 0 and all-pad words.
struct Memn2nBatch {
  int batch = 0;        // B
  int slots = 0;        // N (the largest memory in the batch, >= 1)
  int words = 0;        // W (the longest sentence, >= 1)
  int query_words = 0;  // Wq
  std::vector<int32_t> memory;  // [B, N, W]
  std::vector<int32_t> time;    // [B, N]
  std::vector<float> mask;      // [B, N]
  std::vector<int32_t> query;   // [B, Wq]
  std::vector<int32_t> answer;  // [B]
  std::vector<int32_t> offset;  // [B] window sentences dropped (window longer than memory_size)

  nn::MemoryInput memory_input() const {
    return {memory.data(), time.data(), mask.data(), batch, slots, words};
  }
};

// Builds the batch of samples `indices`. random_noise > 0 (training, needs `rng`) is the paper's
// random noise (RN) as the authors' code does it: for a memory of n sentences, nb in
// [0, ceil(n * random_noise)] empty memories are drawn, n distinct time indices out of n + nb
// are sampled (clipped to memory_size - 1) and assigned in order, most recent = smallest.
// The batch has at least min_slots slots (memory_size for a model with null_slots).
Memn2nBatch make_memn2n_batch(const Memn2nDataset& data, std::span<const int32_t> indices, int memory_size,
                              float random_noise = 0.0f, core::Rng* rng = nullptr, int min_slots = 1);

// ---- model ----------------------------------------------------------------------------------

struct Memn2nOutput {
  Var logits;                  // [B, V]
  std::vector<Var> attention;  // K x [B, N]
};

class Memn2n {
 public:
  static constexpr const char* kName = "memn2n";
  // Builds every parameter under "memn2n/" (N(0, init_stddev²)). Errors on a config that
  // cannot work (vocab, dim, hops or memory_size < 1).
  Memn2n(const Memn2nConfig& cfg, core::Rng& rng, bool fused = true);
  Memn2n(const Memn2n&) = delete;
  Memn2n& operator=(const Memn2n&) = delete;

  // Answer logits and each hop's attention. linear_start = true removes the softmax of the
  // memory layers (the paper's LS). Differentiable in every parameter.
  Memn2nOutput forward(Graph& g, const Memn2nBatch& batch, bool linear_start = false) const;
  // Summed cross-entropy of the answers (the authors' size_average = false): scalar [].
  Var loss(Graph& g, const Memn2nOutput& out, const Memn2nBatch& batch) const;

  nn::ParamStore& params() { return params_; }
  const nn::ParamStore& params() const { return params_; }
  const Memn2nConfig& config() const { return cfg_; }
  // The min_slots its batches need (see make_memn2n_batch).
  int min_slots() const { return cfg_.null_slots ? cfg_.memory_size : 1; }
  nn::BagEncoding encoding() const { return {cfg_.encoding, cfg_.sentence_length}; }

 private:
  // A parameter as a leaf of g (forward is const; only the gradient buffer is written).
  Var param(Graph& g, nn::ParamId id) const { return const_cast<nn::ParamStore&>(params_).var(g, id); }

  Memn2nConfig cfg_;
  nn::ParamStore params_;
  std::vector<nn::Memn2nHop> hops_;
  nn::ParamId query_ = -1;   // B [V, D]
  nn::ParamId answer_ = -1;  // W [V, D]
  nn::ParamId h_ = -1;       // H [D, D] (layer-wise)
  bool fused_;
};

// ---- evaluation -----------------------------------------------------------------------------

struct Memn2nScore {
  int64_t questions = 0;
  int64_t errors = 0;
  double loss_sum = 0;
  // Supporting-fact hit rate: questions whose most attended slot is a supporting fact in some
  // hop (support_any), per hop (support_hop[k]); counted over questions that have any.
  int64_t with_support = 0;
  int64_t support_any = 0;
  std::vector<int64_t> support_hop;

  double error() const { return questions ? static_cast<double>(errors) / questions : 0.0; }
  double loss() const { return questions ? loss_sum / questions : 0.0; }
  double support_rate() const { return with_support ? static_cast<double>(support_any) / with_support : 0.0; }
  void add(const Memn2nScore& o);
};

// Scores every sample of `data` (no gradients), by task (key 0 = all tasks together), by one
// model or an ensemble (ModelSet: the answer probabilities are the members' mean, members of one
// vocabulary V; the support hit rate reads the first member's attention), on bf16 weights where
// the set has them.
std::map<int, Memn2nScore> evaluate_memn2n(const ModelSet<Memn2n>& models, const Memn2nDataset& data,
                                           int batch_size = 128, bool linear_start = false);

// One answered question with what each hop attended (for `engram babi explain`).
struct Memn2nExplanation {
  std::vector<std::vector<float>> attention;  // K x [n] over the window's slots (oldest first)
  int32_t predicted = 0;                      // vocabulary id
  float probability = 0;                      // softmax probability of the prediction
  int32_t offset = 0;                         // window sentences dropped before slot 0
};
// With an ensemble (ModelSet) the prediction and its probability are the members' mean answer
// probability's; the attention shown is the first member's.
Memn2nExplanation explain_memn2n(const ModelSet<Memn2n>& models, const Memn2nDataset& data, int32_t sample);
// The same for several samples run as one batch (one forward pass); attention rows hold the
// batch's N slots, those past a sample's window masked (0).
std::vector<Memn2nExplanation> explain_memn2n(const ModelSet<Memn2n>& models, const Memn2nDataset& data,
                                              std::span<const int32_t> samples);

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::nn::SentenceEncoding> {
  static constexpr std::pair<engram::nn::SentenceEncoding, const char*> items[] = {
      {engram::nn::SentenceEncoding::kBow, "bow"},
      {engram::nn::SentenceEncoding::kPosition, "pe"},
      {engram::nn::SentenceEncoding::kPositionGlobal, "pe_global"}};
};
template <>
struct engram::io::EnumNames<engram::models::WeightTying> {
  static constexpr std::pair<engram::models::WeightTying, const char*> items[] = {
      {engram::models::WeightTying::kAdjacent, "adjacent"}, {engram::models::WeightTying::kLayerWise, "layerwise"}};
};
