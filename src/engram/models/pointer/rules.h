// The decoding rules of the pointer tasks: which classes an output step may emit given what the
// row has emitted so far. The model applies them as the per-step mask of training (teacher
// forcing) and of decoding (decode::StepModel), so greedy, beam and sampling only ever produce
// valid outputs.
// Classes: 0 = end of output, j + 1 = input position j (0 <= j < n), for V = S + 1 classes.
//   sort: each position once; end only after all n.
//   tsp:  city 0 first, then each other city once; end (= the edge back to city 0) only after all n.
//   hull: the labels start at the hull's lowest index, so: a first vertex with at least
//         min(3, n) - 1 higher indices, then unused positions with a higher index than the first;
//         end once >= min(3, n) vertices are out (or nothing is left to point at).
// Dims: S padded positions, n points of the row.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engram/models/pointer/config.h"

namespace engram::models {

inline constexpr int32_t kPointerEnd = 0;  // the end-of-output class
inline constexpr int32_t kPointerGo = -1;  // the <go> "previous class" of the first step

// One row's prefix.
struct PointerPrefix {
  int count = 0;   // positions emitted so far
  int first = -1;  // the first position emitted (-1 before any)
};

// Writes the allowed classes of the next step into mask [S + 1] (1 = allowed, 0 = not) for a row
// of n points (1 <= n <= S) whose emitted positions are marked in used [S] (1 = emitted).
// At least one class is always allowed.
void pointer_allowed(PointerTask task, int n, int s, const PointerPrefix& prefix, const uint8_t* used, float* mask);

// The class sequence of a target index list (0-based positions): position + 1 each, then end.
std::vector<int32_t> pointer_classes(std::span<const int> target);

// The positions of a class sequence (drops the end class and anything after it).
std::vector<int> pointer_positions(std::span<const int32_t> classes);

}  // namespace engram::models
