// Gradient-check rows: rnn family (fused and composed LSTM / GRU steps, single and unrolled).
// LSTM rows output concat(h', c') [B, 2H] so both results are checked. Dims: B batch, H hidden,
// S unrolled steps.
#include "core/grad_cases.h"

namespace engram::core {

namespace grad_cases_rnn {

constexpr int kB = 3, kH = 4, kSteps = 3;

using CellInputs = const std::vector<Var>&;
using LstmFn = LstmState (*)(Var, Var, Var, Var, Var);
using GruFn = Var (*)(Var, Var, Var, Var);

// Inputs: xw [B, 4H], h [B, H], c [B, H], w_hh [4H, H] (+ b_hh [4H]).
GradCase lstm_row(std::string name, LstmFn cell, bool bias) {
  std::vector<OpInput> in = {{{kB, 4 * kH}}, {{kB, kH}}, {{kB, kH}}, {{4 * kH, kH}}};
  if (bias) in.push_back({{4 * kH}});
  return {std::move(name), in, [cell, bias](Graph&, CellInputs x) {
            LstmState s = cell(x[0], x[1], x[2], x[3], bias ? x[4] : Var{});
            return concat({s.h, s.c}, 1);  // [B, 2H]
          }};
}

// Unrolled over S steps with shared weights: xs [S*B, 4H] row blocks, h0, c0, w_hh, b_hh.
GradCase lstm_unroll_row(std::string name, LstmFn cell) {
  return {std::move(name), {{{kSteps * kB, 4 * kH}}, {{kB, kH}}, {{kB, kH}}, {{4 * kH, kH}}, {{4 * kH}}},
          [cell](Graph&, CellInputs x) {
            LstmState s{x[1], x[2]};
            std::vector<Var> hs;
            for (int t = 0; t < kSteps; ++t) {
              s = cell(slice(x[0], 0, t * kB, (t + 1) * kB), s.h, s.c, x[3], x[4]);
              hs.push_back(s.h);
            }
            hs.push_back(s.c);
            return concat(hs, 0);  // [(S+1) B, H]
          }};
}

// Inputs: xw [B, 3H], h [B, H], w_hh [3H, H] (+ b_hh [3H]).
GradCase gru_row(std::string name, GruFn cell, bool bias) {
  std::vector<OpInput> in = {{{kB, 3 * kH}}, {{kB, kH}}, {{3 * kH, kH}}};
  if (bias) in.push_back({{3 * kH}});
  return {std::move(name), in,
          [cell, bias](Graph&, CellInputs x) { return cell(x[0], x[1], x[2], bias ? x[3] : Var{}); }};
}

GradCase gru_unroll_row(std::string name, GruFn cell) {
  return {std::move(name), {{{kSteps * kB, 3 * kH}}, {{kB, kH}}, {{3 * kH, kH}}, {{3 * kH}}},
          [cell](Graph&, CellInputs x) {
            Var h = x[1];
            std::vector<Var> hs;
            for (int t = 0; t < kSteps; ++t) {
              h = cell(slice(x[0], 0, t * kB, (t + 1) * kB), h, x[2], x[3]);
              hs.push_back(h);
            }
            return concat(hs, 0);  // [S B, H]
          }};
}

// Whole-sequence op: T=3, B=3 with ragged lengths (one sequence empty), forward and reverse;
// the checked output is out | h (| c).
GradCase sequence_row(std::string name, bool lstm, bool reverse, std::vector<int> lengths) {
  const int t = 3, b = 3, h = 4, gw = (lstm ? 4 : 3) * h;
  std::vector<OpInput> in = {{{t, b, gw}}, {{b, h}}, {{gw, h}}, {{gw}}};
  if (lstm) in.push_back({{b, h}});
  return {std::move(name), in, [=](Graph&, const std::vector<Var>& x) {
            RnnSequence r = lstm ? lstm_sequence(x[0], x[1], x[4], x[2], x[3], lengths, reverse)
                                 : gru_sequence(x[0], x[1], x[2], x[3], lengths, reverse);
            std::vector<Var> parts = {reshape(r.out, {t * b, h}), r.h};
            if (lstm) parts.push_back(r.c);
            return concat(parts, 0);
          }};
}

}  // namespace grad_cases_rnn

std::vector<GradCase> rnn_cases() {
  using namespace grad_cases_rnn;  // this file's cases
  return {
      lstm_row("lstm_cell", lstm_cell, true),
      lstm_row("lstm_cell/no-bias", lstm_cell, false),
      lstm_unroll_row("lstm_cell/unroll3", lstm_cell),
      lstm_row("lstm_cell_composed", lstm_cell_composed, true),
      lstm_row("lstm_cell_composed/no-bias", lstm_cell_composed, false),
      lstm_unroll_row("lstm_cell_composed/unroll3", lstm_cell_composed),
      gru_row("gru_cell", gru_cell, true),
      gru_row("gru_cell/no-bias", gru_cell, false),
      gru_unroll_row("gru_cell/unroll3", gru_cell),
      gru_row("gru_cell_composed", gru_cell_composed, true),
      gru_row("gru_cell_composed/no-bias", gru_cell_composed, false),
      gru_unroll_row("gru_cell_composed/unroll3", gru_cell_composed),
      sequence_row("lstm_sequence", true, false, {}),
      sequence_row("lstm_sequence/reverse/lengths", true, true, {3, 1, 0}),
      sequence_row("gru_sequence/lengths", false, false, {2, 3, 0}),
      sequence_row("gru_sequence/reverse", false, true, {}),
  };
}

}  // namespace engram::core
