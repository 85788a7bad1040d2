// The Pointer Network's model config (Vinyals, Fortunato & Jaitly 2015; glimpse and logit
// clipping from Bello et al. 2016), saved as a checkpoint's config.yaml. The task is part of it:
// it fixes the input width (1 for sorting, 2 for points) and the decoding rules (which positions
// a step may point at), so a loaded model decodes as it was trained.
// Dims: F input features, E embedding, H hidden, A attention width.
#pragma once

#include <string>
#include <utility>

#include "engram/data/tasks/pointer_tasks.h"
#include "engram/io/config.h"

namespace engram::models {

using PointerTask = data::tasks::PointerTask;
enum class PointerCell { kLstm, kGru };

}  // namespace engram::models

template <>
struct engram::io::EnumNames<engram::data::tasks::PointerTask> {
  static constexpr std::pair<engram::data::tasks::PointerTask, const char*> items[] = {
      {engram::data::tasks::PointerTask::kSort, "sort"},
      {engram::data::tasks::PointerTask::kHull, "hull"},
      {engram::data::tasks::PointerTask::kTsp, "tsp"}};
};
template <>
struct engram::io::EnumNames<engram::models::PointerCell> {
  static constexpr std::pair<engram::models::PointerCell, const char*> items[] = {
      {engram::models::PointerCell::kLstm, "lstm"}, {engram::models::PointerCell::kGru, "gru"}};
};

namespace engram::models {

struct PointerConfig {
  PointerTask task = PointerTask::kSort;  // decoding rules (set from data.task when training)
  int input_dim = 0;        // F (0 = the task's: 1 sort, 2 hull / TSP)
  int embed_dim = 128;      // E: the linear embedding of each input element
  int hidden = 256;         // H: encoder and decoder units
  int attn_dim = 0;         // A: pointer / glimpse scorer width (0 = H)
  int glimpses = 0;         // 0 or 1 glimpse before the pointer (Bello et al. 2016)
  float logit_clip = 0.0f;  // C > 0: pointer scores C tanh(u); 0 = off
  PointerCell cell = PointerCell::kLstm;

  template <class V>
  void visit(V& v) {
    v("task", task, "sort | hull | tsp: the decoding rules (set from data.task when training)");
    v("input_dim", input_dim, "features per input element (0 = the task's: 1 sort, 2 hull / tsp)");
    v("embed_dim", embed_dim, "linear embedding width of an input element");
    v("hidden", hidden, "encoder and decoder units");
    v("attn_dim", attn_dim, "pointer / glimpse attention width (0 = hidden)");
    v("glimpses", glimpses, "glimpses before pointing (0 or 1; Bello et al. 2016)");
    v("logit_clip", logit_clip, "C > 0: pointer scores C tanh(u) (Bello et al. 2016); 0 = off");
    v("cell", cell, "lstm | gru (encoder and decoder)");
  }
  // Errors name the first invalid field.
  void validate() const;
};

const char* pointer_task_name(PointerTask task);  // "sort" | "hull" | "tsp"

}  // namespace engram::models
