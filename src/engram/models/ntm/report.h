// What `engram ntm eval` and `engram ntm show` show: the cost per sequence at each length (and
// repeat count) as a Markdown table, and one run drawn as the paper draws it (inputs, targets,
// outputs, then each head's write and read weighting over time).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engram/models/ntm/model.h"

namespace engram::models {

struct NtmEvalOptions {
  std::vector<int> lengths = {10, 20, 30, 50, 80, 120};  // recall: item counts
  std::vector<int> repeats;  // repeat copy: one, or one per length; empty = the training maximum (others: 1)
  int64_t sequences = 100;   // per row
  int64_t batch = 25;        // sequences per forward pass
  uint64_t seed = 1;         // of the test sequences
};

// A line naming the model, its task and training range, then the table: one row per length
// (lengths and repeats paired, or one of them repeated), each handed to `emit` as soon as it is
// measured (so a long evaluation shows its progress). Repeat copy's table separates the wrong
// end markers from the wrong copy bits (models::EvalResult).
void ntm_eval_report(const LoadedNtmModel& loaded, const NtmEvalOptions& options,
                     const std::function<void(const std::string&)>& emit);

struct NtmShow {
  std::string svg;      // the panels: inputs, targets, outputs ([T, K], 0 where not scored), weightings
  std::string summary;  // "DIR, length 30: cost 0.123 bits, 0 wrong bits"
};

// One generated sequence of the model's task at `length` (recall: items) and `repeat` (repeat
// copy; 0 = the training maximum), from `seed`.
NtmShow show_ntm(const LoadedNtmModel& loaded, int length, int repeat, uint64_t seed);

}  // namespace engram::models
