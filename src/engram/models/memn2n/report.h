// What `engram babi eval` and `engram babi explain` show, as text: the per-task error table of a
// model (or of a per-task tree of models) next to the MemN2N paper's numbers, and the attention of
// every hop over one test story (with the SVG heatmap of it).
#pragma once

#include <string>
#include <vector>

#include "engram/decode/options.h"

namespace engram::models {

struct BabiEvalOptions {
  std::string data;            // bAbI directory ("" = the one the model was trained on)
  std::string split = "test";  // the model's own split: train | valid | test
  bool json = false;           // also the numbers as one JSON line
  // More models run with the model as one ensemble (LoadedModel::set_ensemble); for a tree of
  // task-T/model directories, trees of the same tasks (each task's models ensembled).
  std::vector<std::string> ensemble;
  decode::Precision precision = decode::Precision::kFp32;  // LoadedModel::set_precision
};

// The Markdown table (task, name, error %, the paper's error % for bAbI 1k, supporting-fact hit
// rate), its mean and failed rows, the per-hop hit rates and, with json, one JSON line.
// `model` is a model directory (config.yaml) or a tree of DIR/task-T/model directories.
std::string babi_eval_report(const std::string& model, const BabiEvalOptions& options);

struct BabiExplainOptions {
  std::string data;  // bAbI directory ("" = the one the model was trained on)
  int task = 0;      // 0 = the model's first task
  int question = 0;  // index of the test question in the task (0-based)
  std::vector<std::string> ensemble;  // as BabiEvalOptions (the attention shown is the model's own)
  decode::Precision precision = decode::Precision::kFp32;
};

struct BabiExplanation {
  std::string text;  // the story's sentences with each hop's attention, the answer, each hop's top sentence
  std::string svg;   // the attention as a heatmap ([hops, sentences], supporting facts marked)
};

// One test question of a model directory, explained.
BabiExplanation explain_babi(const std::string& model, const BabiExplainOptions& options);

}  // namespace engram::models
