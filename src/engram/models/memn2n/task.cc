// bAbI MemN2N training: data loading, the TrainTask adapter, linear start + main phase on the
// shared Trainer, seed selection, and loading a trained model directory.
#include "engram/models/memn2n/task.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <numeric>

#include "engram/core/error.h"
#include "engram/data/paths.h"
#include "engram/io/checkpoint.h"
#include "engram/models/loading.h"
#include "engram/io/config.h"
#include "engram/io/files.h"
#include "engram/optim/clip.h"

namespace engram::models {

namespace fs = std::filesystem;

BabiConfig default_babi_config(bool joint) {
  BabiConfig c;
  c.data.joint = joint;
  c.memn2n.dim = joint ? 50 : 20;
  c.memn2n.hops = 3;
  // What the authors' code does and the paper does not print: one position-encoding J for every
  // sentence (the paper's per-sentence J fails tasks 15-16) and empty slots left in the memory
  // softmax (masking them costs tasks 6, 9, 10, 18); see bench/results_memn2n.md.
  c.memn2n.encoding = nn::SentenceEncoding::kPositionGlobal;
  c.memn2n.null_slots = true;
  c.task.lr_decay_epochs = joint ? 15 : 25;
  c.task.linear_start.max_epochs = joint ? 30 : 20;
  c.train.max_epochs = joint ? 60 : 100;
  c.train.optimizer.name = "sgd";
  // The authors' code (MemN2N-babi-matlab) keeps 0.005 after linear start too; 0.01 without LS.
  c.train.optimizer.lr = 0.005f;
  // Each parameter's gradient clipped to norm 40, as the authors' code does (their Weight.update).
  c.train.clip.per_param = 40.0f;
  c.train.log_every = 100;
  c.train.run_dir = joint ? "runs/babi-joint" : "runs/babi";
  return c;
}

std::string babi_data_dir(const BabiConfig& cfg) {
  if (!cfg.data.dir.empty()) return data::resolve_data_path(cfg.data.dir);
  return (data::data_root() / "babi" / "en").string();
}

std::vector<int> parse_babi_tasks(const std::string& spec, const std::string& dir) {
  const std::vector<int> available = data::available_babi_tasks(dir);
  ENGRAM_CHECK(!available.empty(), "no bAbI tasks (qaN_*_train.txt + qaN_*_test.txt) found in '{}'", dir);
  if (spec == "all") return available;
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    char* rest = nullptr;
    long lo = std::strtol(item.c_str(), &rest, 10);  // long, compared before any narrowing: 2^32 + 1 is not task 1
    long hi = lo;
    if (rest && *rest == '-') hi = std::strtol(rest + 1, &rest, 10);
    ENGRAM_CHECK(!item.empty() && rest && *rest == '\0' && lo >= 1 && hi >= lo && hi <= 20,
                 "bad task list '{}': use all, 1,2,5 or 1-3,7 (tasks 1..20)", spec);
    for (int t = static_cast<int>(lo); t <= static_cast<int>(hi); ++t) {
      ENGRAM_CHECK(std::find(available.begin(), available.end(), t) != available.end(),
                   "bAbI task {} has no train and test file in '{}' (available: {})", t, dir,
                   fmt::join(available, ","));
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    }
    pos = end + 1;
  }
  std::sort(out.begin(), out.end());
  return out;
}

BabiData load_babi_data(const BabiConfig& cfg, const std::vector<int>& tasks, const data::Vocab* vocab) {
  const std::string dir = babi_data_dir(cfg);
  const data::BabiOptions opt{.memory_size = cfg.memn2n.memory_size};
  const data::BabiSplitOptions split{.valid_fraction = cfg.data.valid_fraction, .seed = cfg.data.split_seed};
  std::map<int, data::BabiTask> loaded;
  for (int t : data::available_babi_tasks(dir)) loaded.emplace(t, data::load_babi_task(dir, t, opt, split));
  std::vector<const std::vector<data::BabiSample>*> sets;
  for (const auto& [t, task] : loaded) {
    sets.push_back(&task.train);
    sets.push_back(&task.valid);
    sets.push_back(&task.test);
  }
  BabiData d;
  d.vocab = vocab ? *vocab : models::build_babi_vocab(sets);
  d.longest_sentence = models::longest_babi_sentence(sets);
  d.tasks = tasks;
  for (int t : tasks) {
    auto it = loaded.find(t);
    ENGRAM_CHECK(it != loaded.end(), "bAbI task {} is not available in '{}'", t, dir);
    models::encode_babi(it->second.train, t, d.vocab, &d.train);
    models::encode_babi(it->second.valid, t, d.vocab, &d.valid);
    models::encode_babi(it->second.test, t, d.vocab, &d.test);
  }
  ENGRAM_CHECK(!d.train.samples.empty(), "no training questions for tasks {} in '{}'", fmt::join(tasks, ","), dir);
  return d;
}

models::Memn2nConfig memn2n_config(const BabiConfig& cfg, const BabiData& data) {
  models::Memn2nConfig mc = cfg.memn2n;
  mc.vocab = data.vocab.size();
  // pe_global: J = the longest sentence, + 1 with TE (the authors' time word takes the last place).
  if (mc.sentence_length == 0) mc.sentence_length = data.longest_sentence + (mc.temporal ? 1 : 0);
  return mc;
}

// ---- BabiTrainTask --------------------------------------------------------------------------

BabiTrainTask::BabiTrainTask(const BabiConfig& cfg, models::Memn2n& model, const BabiData& data, bool linear_start,
                             std::vector<fs::path> files)
    : cfg_(cfg), model_(model), data_(data), linear_start_(linear_start), files_(std::move(files)) {
  ENGRAM_CHECK(cfg.data.batch_size >= 1, "memn2n: data.batch_size must be >= 1, got {}", cfg.data.batch_size);
  ENGRAM_CHECK(!data.valid.samples.empty(),
               "memn2n: no validation questions: data.valid_fraction {} of the {} training questions of tasks {} "
               "holds none out", cfg.data.valid_fraction, data.train.samples.size(), fmt::join(data.tasks, ","));
  order_.resize(data.train.samples.size());
  std::iota(order_.begin(), order_.end(), 0);
}

YAML::Node BabiTrainTask::model_config() const { return io::to_yaml(model_.config()); }

std::vector<fs::path> BabiTrainTask::checkpoint_files() const { return files_; }

int64_t BabiTrainTask::batches_per_epoch() const {
  const int64_t n = static_cast<int64_t>(data_.train.samples.size());
  return (n + cfg_.data.batch_size - 1) / cfg_.data.batch_size;
}

void BabiTrainTask::begin_epoch(int epoch, uint64_t seed) {
  epoch_ = epoch;
  seed_ = seed;
  std::iota(order_.begin(), order_.end(), 0);
  core::Rng rng(train::epoch_seed(seed, epoch));
  rng.shuffle(order_.begin(), order_.end());
}

namespace {

// Rows [lo, hi) of a batch, with the whole batch's memory and sentence sizes (so each row is
// computed exactly as in the whole batch).
models::Memn2nBatch slice_rows(const models::Memn2nBatch& b, int64_t lo, int64_t hi) {
  models::Memn2nBatch s;
  s.batch = static_cast<int>(hi - lo);
  s.slots = b.slots, s.words = b.words, s.query_words = b.query_words;
  auto rows = [&](const auto& v, int64_t width) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    return std::vector<T>(v.begin() + lo * width, v.begin() + hi * width);
  };
  s.memory = rows(b.memory, int64_t{b.slots} * b.words);
  s.time = rows(b.time, b.slots);
  s.mask = rows(b.mask, b.slots);
  s.query = rows(b.query, b.query_words);
  s.answer = rows(b.answer, 1);
  s.offset = rows(b.offset, 1);
  return s;
}

}  // namespace

train::BatchResult BabiTrainTask::train_batch(int64_t index) {
  const int64_t start = index * cfg_.data.batch_size;
  const int64_t count = std::min<int64_t>(cfg_.data.batch_size, static_cast<int64_t>(order_.size()) - start);
  ENGRAM_CHECK(count > 0, "babi: batch {} past the end of the epoch", index);
  // RN draws depend on (seed, epoch, batch) only, so a resumed run repeats them.
  core::Rng rng(train::batch_seed(seed_, epoch_, index));
  // The whole batch is built on every rank (its noise drawn in the batch's order) and a rank keeps
  // its shard's rows; the loss is a sum over questions, so the shards' gradients add up.
  models::Memn2nBatch batch =
      models::make_memn2n_batch(data_.train, std::span<const int32_t>(order_.data() + start, count),
                                model_.config().memory_size, cfg_.data.random_noise, &rng, model_.min_slots());
  const auto [lo, hi] = train::shard_range(count, shard());
  if (lo == hi) return {0, 0};
  if (hi - lo < count) batch = slice_rows(batch, lo, hi);
  graph_.reset();
  const models::Memn2nOutput out = model_.forward(graph_, batch, linear_start_);
  core::Var loss = model_.loss(graph_, out, batch);
  graph_.backward(loss);
  return {loss.data()[0], hi - lo};
}

std::vector<train::TrainPhase> BabiTrainTask::phases() const {
  const LinearStartConfig& ls = cfg_.task.linear_start;
  if (!ls.enabled) return {};
  return {{.name = "linear_start", .max_epochs = ls.max_epochs, .patience = ls.patience, .lr = ls.lr}};
}

void BabiTrainTask::begin_phase(int phase) { linear_start_ = cfg_.task.linear_start.enabled && phase == 0; }

void BabiTrainTask::after_validation(const train::Metrics&) {
  if (linear_start_) ++ls_epochs_;  // validation runs once an epoch
}

nlohmann::json BabiTrainTask::extra_state() const { return {{"linear_start_epochs", ls_epochs_}}; }

void BabiTrainTask::load_extra_state(const nlohmann::json& j) {
  if (j.is_object()) ls_epochs_ = j.value("linear_start_epochs", 0);
}

train::Metrics BabiTrainTask::validate() {
  const auto scores = models::evaluate_memn2n(model_, data_.valid, 256, linear_start_);
  const models::Memn2nScore& all = scores.at(0);
  return {{"loss", all.loss()}, {"error", all.error()}, {"support", all.support_rate()}};
}

// ---- recipe ---------------------------------------------------------------------------------

namespace {

void write_json(const fs::path& path, const nlohmann::json& j) { io::write_file_atomic(path, j.dump(2) + "\n"); }

// Copies directory src to dst atomically (a temp copy renamed into place; dst replaced).
void copy_dir(const fs::path& src, const fs::path& dst) {
  const fs::path tmp = dst.string() + ".tmp";
  fs::remove_all(tmp);
  fs::copy(src, tmp, fs::copy_options::recursive);
  fs::remove_all(dst);
  fs::rename(tmp, dst);
}

}  // namespace

BabiSeedResult train_babi_seed(const BabiConfig& cfg, const BabiData& data, int64_t seed, const fs::path& run_dir,
                               std::chrono::steady_clock::time_point started) {
  const bool root = train::world().root();  // rank 0 writes for a data-parallel job
  if (root) {
    fs::create_directories(run_dir);
    data.vocab.save((run_dir / "vocab.txt").string());
  }
  BabiDataConfig used = cfg.data;  // what the model was trained on, for eval's defaults
  used.dir = babi_data_dir(cfg);
  used.tasks = fmt::format("{}", fmt::join(data.tasks, ","));
  if (root) io::write_file_atomic(run_dir / "data.yaml", io::dump_config(used));
  const std::vector<fs::path> files = {run_dir / "vocab.txt", run_dir / "data.yaml"};
  const models::Memn2nConfig mc = memn2n_config(cfg, data);
  core::Rng init_rng(static_cast<uint64_t>(seed));
  models::Memn2n model(mc, init_rng);
  BabiSeedResult res;
  res.seed = seed;
  // One run: the linear-start phase (no memory softmax, constant lr), then the main phase (lr
  // decayed every lr_decay_epochs); resumable in either. Run directories of the layout before
  // phases (RUN/seed-S/linear_start/ + done.json) resume in their main phase.
  BabiTrainTask task(cfg, model, data, /*linear_start=*/false, files);
  train::TrainerConfig tc = cfg.train;
  tc.run_dir = run_dir.string();
  tc.seed = static_cast<uint64_t>(seed);
  tc.schedule = optim::ScheduleConfig{.name = "step",
                                      .every = std::max<int64_t>(1, cfg.task.lr_decay_epochs * task.batches_per_epoch()),
                                      .gamma = cfg.task.lr_decay};
  train::Trainer trainer(task, tc);
  trainer.started = started;
  const train::TrainSummary s = trainer.run();
  res.seconds = s.seconds;
  res.out_of_time = s.out_of_time;
  res.linear_start_epochs = task.linear_start_epochs();
  // A run stopped by a time limit before its main phase has no valid error to select it by.
  res.valid_error = s.phase < static_cast<int>(task.phases().size()) ? 1.0 : s.best_metric;
  res.best = run_dir / "best";
  return res;
}

std::vector<BabiSeedResult> train_babi(const BabiConfig& cfg, const BabiData& data, const fs::path& run_dir,
                                       std::chrono::steady_clock::time_point started) {
  ENGRAM_CHECK(!cfg.task.seeds.empty(), "babi: no seeds to train");
  if (train::world().root()) fs::create_directories(run_dir);
  std::vector<BabiSeedResult> results;
  for (int64_t seed : cfg.task.seeds) {
    std::printf("== tasks %s, seed %lld -> %s\n", fmt::format("{}", fmt::join(data.tasks, ",")).c_str(),
                static_cast<long long>(seed), (run_dir / fmt::format("seed-{}", seed)).string().c_str());
    std::fflush(stdout);
    results.push_back(train_babi_seed(cfg, data, seed, run_dir / fmt::format("seed-{}", seed), started));
    if (results.back().out_of_time) break;  // train.max_minutes: the later seeds wait for a resume
  }
  // Only a seed that reached its main phase has a best/ (a time limit may stop one before).
  std::vector<BabiSeedResult> selectable;
  for (const BabiSeedResult& r : results)
    if (fs::exists(r.best)) selectable.push_back(r);
  if (selectable.empty()) {
    ENGRAM_CHECK(results.back().out_of_time, "babi: no seed left a best checkpoint in {}", run_dir.string());
    std::printf("time limit (train.max_minutes) reached before any seed's main phase: no model selected yet; run "
                "the same command again to resume\n");
    return results;
  }
  const auto best = std::min_element(selectable.begin(), selectable.end(), [](const auto& a, const auto& b) {
    return a.valid_error < b.valid_error;
  });
  if (!train::world().root()) return results;  // rank 0 writes the selection
  copy_dir(best->best, run_dir / "model");
  data.vocab.save((run_dir / "model" / "vocab.txt").string());
  nlohmann::json sel;
  sel["selected_seed"] = best->seed;
  sel["criterion"] = "lowest validation error";
  for (const auto& r : results)
    sel["seeds"].push_back({{"seed", r.seed},
                            {"valid_error", r.valid_error},
                            {"seconds", r.seconds},
                            {"linear_start_epochs", r.linear_start_epochs}});
  write_json(run_dir / "selection.json", sel);
  return results;
}

LoadedBabiModel load_babi_model(const fs::path& dir) {
  LoadedBabiModel m;
  m.model_dir = dir;
  // Keys a checkpoint lacks (written before they existed) take the struct defaults, which keep
  // the model as it was trained (e.g. null_slots false), not the recipe's defaults.
  m.model = load_checkpoint_model<Memn2n, Memn2nConfig>(
      dir, [&](const YAML::Node& config, Memn2nConfig& cfg, const std::string& where) {
        if (config.IsMap() && config["trainer"] && config["model"].IsMap()) {
          // The older layout (before the one config shape of docs/families.md): the whole run
          // config, the model under `model:` and the data keys at the top.
          io::from_yaml(config["model"], cfg, where + ": model");
          YAML::Node d;
          for (const char* k : {"tasks", "joint", "batch_size", "valid_fraction", "split_seed", "random_noise"})
            if (config[k]) d[k] = config[k];
          if (config["data"]) d["dir"] = config["data"];
          io::from_yaml(d, m.cfg.data, where);
        } else {
          io::from_yaml(config, cfg, where);
          const fs::path data = model_file(dir, "data.yaml");
          io::from_yaml(io::load_yaml_file(data), m.cfg.data, data.string());
        }
      });
  m.cfg.memn2n = m.model->config();
  m.vocab = data::Vocab::load(model_file(dir, "vocab.txt").string());
  ENGRAM_CHECK(m.vocab.size() == m.cfg.memn2n.vocab, "{}: vocab.txt has {} tokens but the model was built for {}",
               dir.string(), m.vocab.size(), m.cfg.memn2n.vocab);
  return m;
}

std::string LoadedBabiModel::run_line(const std::string& line) { return answer(line).answer; }

void LoadedBabiModel::set_ensemble(std::vector<std::unique_ptr<LoadedModel>> members) {
  setup.set_members(*this, std::move(members), [&](const LoadedModel& member) {
    check_same_vocab(vocab, dynamic_cast<const LoadedBabiModel&>(member).vocab, *this, member);
  });
}

namespace {

// run_line's text split into sentences: after each '.', '!', '?' or newline, sentences of only
// blanks and punctuation dropped; the last must be the question (hold a '?'), else an error.
std::vector<std::string> split_babi_input(const std::string& line) {
  std::vector<std::string> sentences;
  std::string cur;
  for (char c : line) {
    if (c != '\n') cur += c;
    if (c == '.' || c == '!' || c == '?' || c == '\n') {
      if (cur.find_first_not_of(" \t\r.!?") != std::string::npos) sentences.push_back(cur);
      cur.clear();
    }
  }
  if (cur.find_first_not_of(" \t\r") != std::string::npos) sentences.push_back(cur);
  ENGRAM_CHECK(!sentences.empty() && sentences.back().find('?') != std::string::npos,
               "memn2n input: statements, then a question ending in '?' (got '{}')", line.substr(0, 80));
  ENGRAM_CHECK(sentences.size() >= 2, "memn2n input: the story is empty (statements, then the question '{}')",
               sentences.back().substr(0, 80));
  return sentences;
}

}  // namespace

LoadedBabiModel::Parsed LoadedBabiModel::parse(const std::string& line) const {
  // Sentences: split after '.', '!', '?' or a newline; the tokenizer strips the punctuation.
  const std::vector<std::string> sentences = split_babi_input(line);
  const bool fixed_j = cfg.memn2n.encoding == nn::SentenceEncoding::kPositionGlobal;
  const auto tokenize = [&](const std::string& text) {
    data::Sentence words = data::babi_tokenize(text);
    ENGRAM_CHECK(!fixed_j || static_cast<int>(words.size()) <= cfg.memn2n.sentence_length,
                 "memn2n input: a sentence of {} words; this model reads at most {} (memn2n.sentence_length): '{}'",
                 words.size(), cfg.memn2n.sentence_length, text.substr(0, 80));
    return words;
  };
  Parsed p;
  auto story = std::make_shared<std::vector<data::Sentence>>();
  for (size_t i = 0; i + 1 < sentences.size(); ++i) {
    story->push_back(tokenize(sentences[i]));
    const std::string& t = sentences[i];  // as read, without the surrounding blanks
    const size_t b = t.find_first_not_of(" \t\r"), e = t.find_last_not_of(" \t\r");
    p.story.push_back(t.substr(b, e - b + 1));
  }
  p.sample.story = story;
  p.sample.memory_end = static_cast<int32_t>(story->size());
  p.sample.memory_begin = std::max(0, p.sample.memory_end - cfg.memn2n.memory_size);
  p.sample.question = tokenize(sentences.back());
  ENGRAM_CHECK(!p.sample.question.empty(), "memn2n input: the question '{}' has no words",
               sentences.back().substr(0, 80));
  p.sample.answer = vocab.token(0);  // encode_babi wants a known answer; the prediction ignores it
  return p;
}

LoadedBabiModel::Answer LoadedBabiModel::answer(const std::string& line) const {
  Parsed p = parse(line);
  const std::vector<data::BabiSample> samples = {p.sample};
  Memn2nDataset set;
  encode_babi(samples, 0, vocab, &set);
  Answer a;
  a.story = std::move(p.story);
  a.explanation = explain_memn2n(models(), set, 0);
  a.answer = vocab.token(a.explanation.predicted);
  return a;
}

}  // namespace engram::models
