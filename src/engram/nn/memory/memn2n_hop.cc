// MemN2N hop: the fused bag-embedding and attention ops (forward + accumulating backward side by
// side, with their composed references) and the Memn2nHop module over them.
// Dims: B batch, N memory slots, W words per slot, V vocab, D width, T time rows, R sentences.
#include "engram/nn/memory/memn2n_hop.h"

#include <Eigen/Core>

#include <cstring>
#include <vector>

#include "engram/core/ops.h"
#include "engram/nn/init.h"

namespace engram::nn {

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapMat = Eigen::Map<RowMat>;
using MapConstMat = Eigen::Map<const RowMat>;
using MapVec = Eigen::Map<Eigen::VectorXf>;
using MapConstVec = Eigen::Map<const Eigen::VectorXf>;
using core::Node;

// Length J of a padded sentence: index of its last non-pad word + 1 (0 for an empty slot).
int sentence_length(const int32_t* w, int words) {
  int J = words;
  while (J > 0 && w[J - 1] == 0) --J;
  return J;
}

void check_bag_inputs(const char* op, Var table, const int32_t* ids, int64_t rows, int words, BagEncoding enc,
                      Var temporal, const int32_t* time) {
  const core::Shape& st = table.shape();
  ENGRAM_CHECK(st.rank() == 2, "{}: table must be [V, D], got {}", op, st);
  ENGRAM_CHECK(rows >= 0 && words >= 1, "{}: need rows >= 0 and words >= 1, got {} and {}", op, rows, words);
  ENGRAM_CHECK(enc.kind != SentenceEncoding::kPositionGlobal || words <= enc.length,
               "{}: sentences of {} words are longer than the position encoding's J = {}", op, words, enc.length);
  if (!temporal.valid()) return;
  const core::Shape& tt = temporal.shape();
  ENGRAM_CHECK(tt.rank() == 2 && tt[1] == st[1], "{}: temporal table {} does not match table {}", op, tt, st);
  ENGRAM_CHECK(time != nullptr, "{}: a temporal table needs time indices", op);
  for (int64_t r = 0; r < rows; ++r)
    ENGRAM_CHECK(time[r] >= -1 && time[r] < tt[0], "{}: time index {} outside [-1, {})", op, time[r], tt[0]);
}

// Per-word weights l_j [D] of every sentence length: table(J) [W, D] for J = 1..W (one table for
// pe_global, none for BoW: weight 1). Built once per op call, so the row loops only multiply-add.
class WordWeights {
 public:
  WordWeights(int words, int d, BagEncoding enc) : words_(words), d_(d), enc_(enc) {
    if (enc.kind == SentenceEncoding::kBow) return;
    const int tables = enc.kind == SentenceEncoding::kPosition ? words : 1;
    w_.resize(static_cast<size_t>(tables) * words * d);
    for (int t = 0; t < tables; ++t) {
      const int J = t + 1;
      for (int j = 0; j < (enc.kind == SentenceEncoding::kPosition ? J : words); ++j)
        for (int k = 0; k < d; ++k)
          w_[(static_cast<size_t>(t) * words + j) * d + k] =
              enc.kind == SentenceEncoding::kPosition ? position_weight(j + 1, J, k + 1, d)
                                                      : position_weight_global(j + 1, enc.length, k + 1, d);
    }
  }
  bool bow() const { return enc_.kind == SentenceEncoding::kBow; }
  // Weights [W, D] of the words of a sentence of length J >= 1 (not for BoW).
  const float* table(int J) const {
    const int t = enc_.kind == SentenceEncoding::kPosition ? J - 1 : 0;
    return w_.data() + static_cast<size_t>(t) * words_ * d_;
  }

 private:
  int words_, d_;
  BagEncoding enc_;
  std::vector<float> w_;
};

// Per-word weights of one sentence into lw [W, D] (rows past J unused): the composed reference.
void word_weights(const int32_t* w, int words, int d, BagEncoding enc, float* lw) {
  const int J = sentence_length(w, words);
  if (J == 0) return;
  const WordWeights ww(words, d, enc);
  for (int j = 0; j < J; ++j)
    for (int k = 0; k < d; ++k) lw[static_cast<int64_t>(j) * d + k] = ww.bow() ? 1.0f : ww.table(J)[j * d + k];
}

struct BagAux {
  int32_t* ids;   // [R, W]
  int32_t* time;  // [R] or nullptr
};

}  // namespace

// y[r] = Σ_j l_j ⊙ table[ids[r, j]] (+ temporal[time[r]]);
// dtable[ids[r, j]] += l_j ⊙ dy[r];  dtemporal[time[r]] += dy[r]
Var bag_embed(Var table, const int32_t* ids, int64_t rows, int words, BagEncoding enc, Var temporal,
              const int32_t* time) {
  check_bag_inputs("bag_embed", table, ids, rows, words, enc, temporal, time);
  Graph& g = *table.g;
  const int d = table.shape()[1];
  Tensor y = g.alloc_zero({static_cast<int>(rows), d});
  const WordWeights lw(words, d, enc);
  const float* tab = table.data();
  const int64_t vocab = table.shape()[0];
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* w = ids + r * words;
    float* yr = y.data + r * d;
    const int J = sentence_length(w, words);
    for (int j = 0; j < J; ++j) {
      if (w[j] == 0) continue;
      ENGRAM_CHECK(w[j] > 0 && w[j] < vocab, "bag_embed: word id {} outside the table of {} rows", w[j], vocab);
      const float* row = tab + static_cast<int64_t>(w[j]) * d;
      if (lw.bow()) {
        for (int k = 0; k < d; ++k) yr[k] += row[k];
      } else {
        const float* l = lw.table(J) + static_cast<int64_t>(j) * d;
        for (int k = 0; k < d; ++k) yr[k] += l[k] * row[k];
      }
    }
    if (temporal.valid() && time[r] >= 0) {
      const float* trow = temporal.data() + static_cast<int64_t>(time[r]) * d;
      for (int k = 0; k < d; ++k) yr[k] += trow[k];
    }
  }
  auto backward = [](Graph& g, const Node& n) {
    const BagAux* aux = static_cast<const BagAux*>(n.aux);
    const int64_t rows = n.value.shape[0];
    const int d = n.value.shape[1], words = n.i[0];
    const BagEncoding enc(static_cast<SentenceEncoding>(n.i[1]), n.i[3]);
    if (float* dtab = g.grad(n.in[0])) {
      const WordWeights lw(words, d, enc);
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t* w = aux->ids + r * words;
        const float* dy = n.grad + r * d;
        const int J = sentence_length(w, words);
        for (int j = 0; j < J; ++j) {
          if (w[j] == 0) continue;
          float* drow = dtab + static_cast<int64_t>(w[j]) * d;
          if (lw.bow()) {
            for (int k = 0; k < d; ++k) drow[k] += dy[k];
          } else {
            const float* l = lw.table(J) + static_cast<int64_t>(j) * d;
            for (int k = 0; k < d; ++k) drow[k] += l[k] * dy[k];
          }
        }
      }
    }
    if (float* dt = n.i[2] ? g.grad(n.in[1]) : nullptr) {
      for (int64_t r = 0; r < rows; ++r) {
        if (aux->time[r] < 0) continue;
        float* drow = dt + static_cast<int64_t>(aux->time[r]) * d;
        const float* dy = n.grad + r * d;
        for (int k = 0; k < d; ++k) drow[k] += dy[k];
      }
    }
  };
  Var v = temporal.valid() ? g.record(y, backward, {table, temporal}) : g.record(y, backward, {table});
  if (v.needs_grad()) {
    Node& n = g.node(v);
    auto* aux = g.arena().array<BagAux>(1);
    aux->ids = g.arena().array<int32_t>(rows * words);
    std::memcpy(aux->ids, ids, sizeof(int32_t) * rows * words);
    aux->time = nullptr;
    if (temporal.valid()) {
      aux->time = g.arena().array<int32_t>(rows);
      std::memcpy(aux->time, time, sizeof(int32_t) * rows);
    }
    n.aux = aux;
    n.i[0] = words;
    n.i[1] = static_cast<int32_t>(enc.kind);
    n.i[3] = enc.length;
    n.i[2] = temporal.valid() ? 1 : 0;
  }
  return v;
}

Var bag_embed_composed(Var table, const int32_t* ids, int64_t rows, int words, BagEncoding enc,
                       Var temporal, const int32_t* time) {
  check_bag_inputs("bag_embed_composed", table, ids, rows, words, enc, temporal, time);
  Graph& g = *table.g;
  const int d = table.shape()[1];
  const int r = static_cast<int>(rows);
  // Weights [R * W, D]: l_j (or 1) for words, 0 for padding.
  Tensor wt = g.alloc_zero({r * words, d});
  for (int64_t i = 0; i < rows; ++i) word_weights(ids + i * words, words, d, enc, wt.data + i * words * d);
  for (int64_t i = 0; i < rows * words; ++i)
    if (ids[i] == 0) std::memset(wt.data + i * d, 0, sizeof(float) * d);
  Var e = core::gather_rows(table, ids, rows * words);                          // [R * W, D]
  Var y = core::sum(core::reshape(core::mul(e, g.input(wt)), {r, words, d}), 1);  // [R, D]
  if (!temporal.valid()) return y;
  std::vector<int32_t> t(time, time + rows);
  Tensor keep = g.alloc({r, 1});
  for (int64_t i = 0; i < rows; ++i) {
    keep.data[i] = t[i] >= 0 ? 1.0f : 0.0f;
    if (t[i] < 0) t[i] = 0;
  }
  return core::add(y, core::mul(core::gather_rows(temporal, t), g.input(keep)));
}

namespace {

void check_scores(const char* op, const core::Shape& sm, const core::Shape& su) {
  ENGRAM_CHECK(sm.rank() == 3 && su.rank() == 2 && sm[0] == su[0] && sm[2] == su[1],
               "{}: need memory [B, N, D] and u [B, D], got {} and {}", op, sm, su);
}
void check_read(const char* op, const core::Shape& sp, const core::Shape& sv) {
  ENGRAM_CHECK(sp.rank() == 2 && sv.rank() == 3 && sp[0] == sv[0] && sp[1] == sv[1],
               "{}: need p [B, N] and values [B, N, D], got {} and {}", op, sp, sv);
}

}  // namespace

// s[b] = M_b u_b;  dM_b += ds_b u_bᵀ;  du_b += M_bᵀ ds_b
Var memory_scores(Var memory, Var u) {
  check_scores("memory_scores", memory.shape(), u.shape());
  Graph& g = *memory.g;
  const int b = memory.shape()[0], n = memory.shape()[1], d = memory.shape()[2];
  Tensor s = g.alloc({b, n});
  for (int i = 0; i < b; ++i)
    MapVec(s.data + i * n, n).noalias() =
        MapConstMat(memory.data() + static_cast<int64_t>(i) * n * d, n, d) * MapConstVec(u.data() + i * d, d);
  return g.record(s, [](Graph& g, const Node& nd) {
    const Tensor& M = g.node(nd.in[0]).value;
    const Tensor& U = g.node(nd.in[1]).value;
    const int b = M.shape[0], n = M.shape[1], d = M.shape[2];
    float* dm = g.grad(nd.in[0]);
    float* du = g.grad(nd.in[1]);
    for (int i = 0; i < b; ++i) {
      MapConstVec ds(nd.grad + i * n, n);
      if (dm) MapMat(dm + static_cast<int64_t>(i) * n * d, n, d).noalias() += ds * MapConstVec(U.data + i * d, d).transpose();
      if (du) MapVec(du + i * d, d).noalias() += MapConstMat(M.data + static_cast<int64_t>(i) * n * d, n, d).transpose() * ds;
    }
  }, {memory, u});
}

// o_b = V_bᵀ p_b;  dp_b += V_b do_b;  dV_b += p_b do_bᵀ
Var memory_read(Var p, Var values) {
  check_read("memory_read", p.shape(), values.shape());
  Graph& g = *p.g;
  const int b = values.shape()[0], n = values.shape()[1], d = values.shape()[2];
  Tensor o = g.alloc({b, d});
  for (int i = 0; i < b; ++i)
    MapVec(o.data + i * d, d).noalias() =
        MapConstMat(values.data() + static_cast<int64_t>(i) * n * d, n, d).transpose() * MapConstVec(p.data() + i * n, n);
  return g.record(o, [](Graph& g, const Node& nd) {
    const Tensor& P = g.node(nd.in[0]).value;
    const Tensor& Vv = g.node(nd.in[1]).value;
    const int b = Vv.shape[0], n = Vv.shape[1], d = Vv.shape[2];
    float* dp = g.grad(nd.in[0]);
    float* dv = g.grad(nd.in[1]);
    for (int i = 0; i < b; ++i) {
      MapConstVec dout(nd.grad + i * d, d);
      if (dp) MapVec(dp + i * n, n).noalias() += MapConstMat(Vv.data + static_cast<int64_t>(i) * n * d, n, d) * dout;
      if (dv) MapMat(dv + static_cast<int64_t>(i) * n * d, n, d).noalias() += MapConstVec(P.data + i * n, n) * dout.transpose();
    }
  }, {p, values});
}

Var memory_scores_composed(Var memory, Var u) {
  check_scores("memory_scores_composed", memory.shape(), u.shape());
  const int b = memory.shape()[0], n = memory.shape()[1], d = memory.shape()[2];
  return core::reshape(core::bmm(memory, core::reshape(u, {b, d, 1})), {b, n});
}

Var memory_read_composed(Var p, Var values) {
  check_read("memory_read_composed", p.shape(), values.shape());
  const int b = values.shape()[0], n = values.shape()[1], d = values.shape()[2];
  return core::reshape(core::bmm(core::reshape(p, {b, 1, n}), values), {b, d});
}

// ---- Memn2nHop ------------------------------------------------------------------------------

Memn2nHop::Memn2nHop(ParamStore& store, std::string path, const Memn2nHopConfig& cfg, core::Rng& rng)
    : Module(store, std::move(path)), cfg_(cfg) {
  input_ = new_tables("a", "t_a", rng);
  output_ = new_tables("c", "t_c", rng);
}

Memn2nHop::Memn2nHop(ParamStore& store, std::string path, const Memn2nHopConfig& cfg, MemoryTables input,
                     std::optional<MemoryTables> output, core::Rng& rng)
    : Module(store, std::move(path)), cfg_(cfg), input_(input) {
  ENGRAM_CHECK(input.words >= 0 && (!cfg.temporal || input.temporal >= 0),
               "memn2n hop {}: tied input tables are missing (temporal encoding needs a temporal table)", this->path());
  output_ = output ? *output : new_tables("c", "t_c", rng);
}

MemoryTables Memn2nHop::new_tables(const std::string& word_name, const std::string& time_name, core::Rng& rng) {
  ENGRAM_CHECK(cfg_.vocab > 0 && cfg_.dim > 0 && cfg_.time_rows > 0,
               "memn2n hop {}: vocab, dim and time_rows must be positive, got {}, {}, {}", path(), cfg_.vocab, cfg_.dim,
               cfg_.time_rows);
  MemoryTables t;
  t.words = add_param(word_name, {cfg_.vocab, cfg_.dim});
  init::normal(store(), t.words, rng, 0.0f, cfg_.init_stddev);
  if (cfg_.temporal) {
    t.temporal = add_param(time_name, {cfg_.time_rows, cfg_.dim});
    init::normal(store(), t.temporal, rng, 0.0f, cfg_.init_stddev);
  }
  return t;
}

Var Memn2nHop::embed(Graph& g, const MemoryTables& tables, const MemoryInput& mem) const {
  ENGRAM_CHECK(mem.batch > 0 && mem.slots > 0 && mem.words_per_slot > 0 && mem.words && mem.mask,
               "memn2n hop {}: empty or incomplete memory batch (B {}, N {}, W {})", path(), mem.batch, mem.slots,
               mem.words_per_slot);
  const int64_t rows = static_cast<int64_t>(mem.batch) * mem.slots;
  Var table = param(g, tables.words);
  Var temporal;
  if (cfg_.temporal) {
    ENGRAM_CHECK(mem.time != nullptr, "memn2n hop {}: temporal encoding needs time indices", path());
    temporal = param(g, tables.temporal);
  }
  Var e = cfg_.fused ? bag_embed(table, mem.words, rows, mem.words_per_slot, cfg_.encoding, temporal, mem.time)
                     : bag_embed_composed(table, mem.words, rows, mem.words_per_slot, cfg_.encoding, temporal, mem.time);
  return core::reshape(e, {mem.batch, mem.slots, cfg_.dim});  // [B, N, D]
}

HopOutput Memn2nHop::read(Graph& g, Var m, Var c, Var u, const float* mask, bool softmax) const {
  Var s = cfg_.fused ? memory_scores(m, u) : memory_scores_composed(m, u);  // [B, N]
  Var p = !softmax ? s : mask ? core::softmax(s, mask) : core::softmax(s);
  Var o = cfg_.fused ? nn::memory_read(p, c) : memory_read_composed(p, c);      // [B, D]
  return {o, p};
}

HopOutput Memn2nHop::forward(Graph& g, const MemoryInput& mem, Var u, bool softmax) const {
  return read(g, embed(g, input_, mem), embed(g, output_, mem), u, mem.mask, softmax);
}

}  // namespace engram::nn
