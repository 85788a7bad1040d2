// One memory hop of an End-To-End Memory Network (Sukhbaatar et al. 2015): the memory sentences
// are embedded twice, as input memories m_i = Σ_j l_j ⊙ A x_ij + T_A(i) and output memories
// c_i = Σ_j l_j ⊙ C x_ij + T_C(i); the controller state u attends p = softmax(m u) over them
// (or p = m u during linear start) and reads o = Σ_i p_i c_i.
// Also the two fused ops the hop is made of (bag embedding, batched attention scores and read),
// each next to a composed reference built from core ops that the tests prove equal to it.
// Dims: B batch, N memory slots, W words per slot, V vocab, D embedding width, T time rows,
// R rows (sentences) of a bag embedding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engram/core/rng.h"
#include "engram/nn/param_store.h"

namespace engram::nn {

// How the words of a sentence are combined: bag of words (Σ_j A x_j) or the paper's position
// encoding Σ_j l_j ⊙ A x_j with l_kj = (1 - j/J) - (k/D)(1 - 2j/J) (j = 1..J word, k = 1..D dim,
// J = the sentence's length: the index of its last non-pad word), or the variant of the authors'
// code (MemN2N-babi-matlab) with one J for every sentence, the longest one:
// l_kj = 1 + 4 (k - (D+1)/2)(j - (J+1)/2) / (D J).
enum class SentenceEncoding { kBow, kPosition, kPositionGlobal };

// An encoding and, for kPositionGlobal, its sentence length J (>= every sentence's word count).
struct BagEncoding {
  BagEncoding(SentenceEncoding k = SentenceEncoding::kPosition, int length = 0) : kind(k), length(length) {}
  SentenceEncoding kind;
  int length;
};

// ---- fused ops (differentiable in every Var argument) --------------------------------------

// Bag embedding of R sentences of W word ids each (row-major [R, W], id 0 = padding: skipped,
// never read, never gets a gradient) into [R, D]; plus, when `temporal` is valid, the row
// temporal[time[r]] for every r with time[r] >= 0 (time [R]; -1 = none, e.g. an empty slot).
// table [V, D], temporal [T, D]. Ids outside [0, V) or times outside [-1, T) are an error.
// Backward touches only the rows used.
Var bag_embed(Var table, const int32_t* ids, int64_t rows, int words, BagEncoding encoding,
              Var temporal = {}, const int32_t* time = nullptr);
// The same from gather_rows / mul / sum / add (the reference the fused op must match).
Var bag_embed_composed(Var table, const int32_t* ids, int64_t rows, int words,
                       BagEncoding encoding, Var temporal = {}, const int32_t* time = nullptr);

// Attention scores of a batch: memory [B, N, D], u [B, D] -> [B, N], s[b, n] = m[b, n] · u[b].
Var memory_scores(Var memory, Var u);
// Attention read: p [B, N], values [B, N, D] -> [B, D], o[b] = Σ_n p[b, n] values[b, n].
Var memory_read(Var p, Var values);
// References through bmm.
Var memory_scores_composed(Var memory, Var u);
Var memory_read_composed(Var p, Var values);

// The position-encoding weight l_kj for word j (1-based) of a J-word sentence, dim k (1-based).
inline float position_weight(int j, int J, int k, int D) {
  const float fj = static_cast<float>(j) / static_cast<float>(J);
  return (1.0f - fj) - (static_cast<float>(k) / static_cast<float>(D)) * (1.0f - 2.0f * fj);
}
// The authors' code's weight for word j of J (fixed), dim k of D (all 1-based).
inline float position_weight_global(int j, int J, int k, int D) {
  return 1.0f + 4.0f * (static_cast<float>(k) - 0.5f * static_cast<float>(D + 1)) *
                    (static_cast<float>(j) - 0.5f * static_cast<float>(J + 1)) / static_cast<float>(D * J);
}

// ---- the hop module ------------------------------------------------------------------------

struct Memn2nHopConfig {
  int vocab = 0;             // V
  int dim = 0;               // D
  int time_rows = 50;        // T: temporal-encoding rows (the memory size)
  BagEncoding encoding{};    // PE by default
  bool temporal = true;      // TE: add T_A(i), T_C(i)
  float init_stddev = 0.1f;  // new tables ~ N(0, stddev²)
  bool fused = true;         // false: the composed reference ops (tests, debugging)
};

// A memory embedding: word table and (with TE) its temporal table.
struct MemoryTables {
  ParamId words = -1;     // [V, D]
  ParamId temporal = -1;  // [T, D]; -1 without TE
};

// One batch of memories, caller-owned (must outlive the graph use).
struct MemoryInput {
  const int32_t* words = nullptr;  // [B, N, W] word ids, 0 = padding
  const int32_t* time = nullptr;   // [B, N] temporal index (0 = most recent), -1 = empty slot
  const float* mask = nullptr;     // [B, N] 1 = a sentence, 0 = empty slot
  int batch = 0;                   // B
  int slots = 0;                   // N
  int words_per_slot = 0;          // W
};

struct HopOutput {
  Var read;       // [B, D]  o = Σ_i p_i c_i
  Var attention;  // [B, N]  p (softmax over the non-empty slots; raw scores in linear start)
};

class Memn2nHop : public Module {
 public:
  // New input tables A, T_A ("<path>/a", "<path>/t_a") and output tables C, T_C ("<path>/c",
  // "<path>/t_c"), initialised N(0, init_stddev²) from `rng`.
  Memn2nHop(ParamStore& store, std::string path, const Memn2nHopConfig& cfg, core::Rng& rng);
  // Tied input tables (adjacent tying: A^{k+1} = C^k); new output tables unless `output` is
  // given (layer-wise tying: every hop shares the first hop's A and C).
  Memn2nHop(ParamStore& store, std::string path, const Memn2nHopConfig& cfg, MemoryTables input,
            std::optional<MemoryTables> output, core::Rng& rng);

  // Embeds the memory sentences with `tables` (one of this hop's): [B, N, D]. Empty slots
  // (time -1 and all-pad words) embed to zero.
  Var embed(Graph& g, const MemoryTables& tables, const MemoryInput& mem) const;
  // The hop on already embedded memories m = embed(input), c = embed(output); u [B, D].
  // mask [B, N] (1 = attend) or nullptr (every slot). softmax = false is linear start (p = m u).
  // Differentiable in m, c, u.
  HopOutput read(Graph& g, Var m, Var c, Var u, const float* mask, bool softmax) const;
  // embed + read.
  HopOutput forward(Graph& g, const MemoryInput& mem, Var u, bool softmax) const;

  const MemoryTables& input() const { return input_; }
  const MemoryTables& output() const { return output_; }
  const Memn2nHopConfig& config() const { return cfg_; }

 private:
  MemoryTables new_tables(const std::string& word_name, const std::string& time_name, core::Rng& rng);

  Memn2nHopConfig cfg_;
  MemoryTables input_;   // A [V, D], T_A [T, D]
  MemoryTables output_;  // C [V, D], T_C [T, D]
};

}  // namespace engram::nn
