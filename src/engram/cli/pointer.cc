// `engram pointer eval|show`: Pointer Networks on sorting, convex hull and TSP; training is
// `engram train configs/pointer-*.yaml`. A thin adapter over models/pointer/.
//   engram pointer eval -m DIR [--n 5,10,20] [--instances N] [--beam K] [--samples K [--temperature T]]
//                       [--views V] [--precision fp32|bf16|int8] [--ensemble DIR ...]
//                       [--file PATH]   metrics per n
//   engram pointer show -m DIR --n 20 [--seed S] [--beam K] [--views V] -o out.svg   predicted vs optimal + attention
// DIR is a model directory (config.yaml) or a run directory (its best/, else last/).
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/ensemble.h"
#include "engram/cli/options.h"
#include "engram/io/files.h"
#include "engram/models/pointer/eval.h"
#include "engram/models/pointer/show.h"
#include "engram/viz/heatmap.h"

namespace engram::cli {

namespace {

constexpr int kMaxN = 1000;         // points per generated instance
struct PointerEvalArgs {
  ModelArgs model;  // its decode: the family's decode flags
  std::string file;
  std::vector<int> n = {5, 10, 20};
  int64_t instances = 1000, seed = 12345;
};

void run_eval(const PointerEvalArgs& a, const CLI::App* cmd) {
  decode::DecodeOptions d = *a.model.decode;
  const std::vector<std::string> given = finish_decode_flags(cmd, d, models::pointer_option_set());
  std::string names;
  auto loaded = load_model_flags<models::LoadedPointerModel>(a.model, "pointer", d, given, &names);
  models::PointerEvalOptions o;
  o.n = a.n;
  o.instances = a.instances;
  o.seed = static_cast<uint64_t>(a.seed);
  o.file = a.file;
  o.decode = models::pointer_decode_options(d);
  const models::PointerTask task = loaded->model->cfg().task;
  // Checked before the heading is printed (predict_pointer checks it too).
  ENGRAM_CHECK(d.views == 1 || task != models::PointerTask::kSort,
               "--views: views are readings of 2-D points (hull, tsp), not of sorting");
  const char* kept = task == models::PointerTask::kTsp ? "shortest tour" : "highest log-probability";
  std::string search = d.beam == 1 ? "greedy" : fmt::format("beam {}", d.beam);
  if (d.samples > 0)
    search += fmt::format(" and {} samples at temperature {} per instance, the best kept ({})", d.samples,
                          d.temperature, kept);
  if (d.views > 1)
    search += fmt::format(", over {} views of each instance (mirrored, turned, shuffled), the best kept ({})", d.views,
                          kept);
  if (d.precision != decode::Precision::kFp32) search += fmt::format(", {} weights", decode::precision_name(d.precision));
  std::printf("pointer network (%s) on %s, %s; %s\n\n", names.c_str(), models::pointer_task_name(task), search.c_str(),
              a.file.empty() ? fmt::format("{} generated instances per n, seed {}", a.instances, a.seed).c_str()
                             : a.file.c_str());
  std::fflush(stdout);
  const auto rows = models::evaluate_pointer(loaded->models(), o);
  std::fputs(models::pointer_eval_table(task, rows).c_str(), stdout);
}

struct PointerShowArgs {
  std::string dir, out = "pointer.svg";
  int n = 20, beam = 1, threads = 1, views = 1;
  int64_t seed = 1;
};

void run_show(const PointerShowArgs& a) {
  use_threads(a.threads);
  auto loaded = models::load_model_as<models::LoadedPointerModel>(a.dir, "pointer");
  const models::PointerShow s =
      models::show_pointer(*loaded->model, a.n, static_cast<uint64_t>(a.seed), a.beam, a.views);
  io::write_output_file(a.out, s.svg);
  std::printf("%s; wrote %s\n", s.summary.c_str(), a.out.c_str());
}

}  // namespace

void register_pointer(CLI::App& app) {
  auto* ptr = app.add_subcommand("pointer", "Pointer Networks: sorting, convex hull, TSP (eval, show)");
  ptr->require_subcommand(1);

  auto ea = std::make_shared<PointerEvalArgs>();
  auto* eval = ptr->add_subcommand("eval", "the task's metrics per n as a Markdown table");
  add_model_flags(eval, ea->model, false);
  eval->add_option("--n", ea->n, "points per generated instance, e.g. 5,10,20")->delimiter(',')->check(CLI::Range(1, kMaxN));
  eval->add_option("--instances", ea->instances, "generated instances per n")->check(CLI::Range(1, 1000000));
  eval->add_option("--seed", ea->seed, "seed of the generated instances")->check(non_negative<int64_t>());
  // --seed is the generated instances' (sampling keeps its default seed).
  add_decode_flags(eval, ea->model.decode, models::pointer_option_set(), {"seed"});
  eval->add_option("--file", ea->file, "instances in the paper's format instead (grouped by n)");
  eval->callback([ea, eval] { run_eval(*ea, eval); });

  auto sa = std::make_shared<PointerShowArgs>();
  auto* show = ptr->add_subcommand("show", "SVG: predicted vs optimal tour / hull / order, and the pointer's attention");
  add_model_option(show, sa->dir);
  show->add_option("--n", sa->n, "points")->check(CLI::Range(1, kMaxN));
  show->add_option("--seed", sa->seed, "seed of the instance")->check(non_negative<int64_t>());
  show->add_option("--beam", sa->beam, "beam size (1 = greedy)")->check(CLI::Range(1, 64));
  show->add_option("--views", sa->views, "hull, tsp: decode over this many readings, the best kept (as eval --views)")
      ->check(CLI::Range(1, models::kMaxPointerViews));
  add_output_option(show, sa->out, "SVG file to write");
  add_threads_option(show, sa->threads);
  show->callback([sa] { run_show(*sa); });
}

}  // namespace engram::cli
