// bAbI parsing, task discovery and the validation split (see babi.h).
#include "engram/data/babi.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <unordered_set>

#include "engram/core/error.h"
#include "engram/core/rng.h"
#include "engram/data/text.h"

namespace engram::data {
namespace {

bool is_ascii_punct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
         (c >= '{' && c <= '~');
}

std::string lower_ascii(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

bool parse_int(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::string short_text(const std::string& line) {
  return line.size() > 60 ? line.substr(0, 57) + "..." : line;
}

// "qa12_conjunction_train.txt" -> {12, "conjunction", "train"}; false if the name does not match.
bool parse_task_file_name(const std::string& file, int* task, std::string* name,
                          std::string* split) {
  if (file.rfind("qa", 0) != 0 || file.size() < 4 || file.substr(file.size() - 4) != ".txt") {
    return false;
  }
  const std::string stem = file.substr(2, file.size() - 6);
  const size_t first = stem.find('_');
  const size_t last = stem.rfind('_');
  if (first == std::string::npos || last == first) return false;
  int64_t n;
  if (!parse_int(std::string_view(stem).substr(0, first), &n) || n < 1 || n > 20) return false;
  *task = static_cast<int>(n);
  *name = stem.substr(first + 1, last - first - 1);
  *split = stem.substr(last + 1);
  return *split == "train" || *split == "test";
}

}  // namespace

Sentence babi_tokenize(const std::string& text, bool lowercase) {
  Sentence out;
  for (auto& raw : split_whitespace(text)) {
    size_t b = 0, e = raw.size();
    while (b < e && is_ascii_punct(raw[b])) ++b;
    while (e > b && is_ascii_punct(raw[e - 1])) --e;
    if (b == e) continue;
    std::string tok = raw.substr(b, e - b);
    out.push_back(lowercase ? lower_ascii(std::move(tok)) : std::move(tok));
  }
  return out;
}

std::vector<BabiSample> read_babi_file(const std::string& path, const BabiOptions& o) {
  ENGRAM_CHECK(o.memory_size > 0, "bAbI: memory_size must be > 0, got {}", o.memory_size);
  const auto lines = read_lines(path);
  std::vector<BabiSample> samples;
  std::shared_ptr<std::vector<Sentence>> story;
  std::vector<int32_t> statement_of_id;  // [id] -> statement index in story, -1 for questions
  int64_t prev_id = 0;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    const int64_t lineno = static_cast<int64_t>(li + 1);
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    int64_t id = 0;
    ENGRAM_CHECK(space != std::string::npos &&
                     parse_int(std::string_view(line).substr(0, space), &id) && id >= 1,
                 "{}:{}: expected 'ID text' with a positive integer ID, got '{}'", path, lineno,
                 short_text(line));
    if (id == 1) {
      story = std::make_shared<std::vector<Sentence>>();
      statement_of_id.assign(1, -1);
    } else {
      ENGRAM_CHECK(story && id == prev_id + 1,
                   "{}:{}: line ID {} does not follow ID {} (IDs count up from 1 within a story)",
                   path, lineno, id, prev_id);
    }
    prev_id = id;
    const std::string rest = line.substr(space + 1);
    const size_t tab = rest.find('\t');
    if (tab == std::string::npos) {  // a statement (bAbI statements never hold a '?')
      ENGRAM_CHECK(rest.find('?') == std::string::npos,
                   "{}:{}: a question without its answer: question lines are 'ID question<TAB>answer<TAB>"
                   "supporting IDs', got '{}'", path, lineno, short_text(line));
      statement_of_id.push_back(static_cast<int32_t>(story->size()));
      story->push_back(babi_tokenize(rest, o.lowercase));
      continue;
    }
    statement_of_id.push_back(-1);
    const size_t tab2 = rest.find('\t', tab + 1);
    ENGRAM_CHECK(tab2 != std::string::npos,
                 "{}:{}: question line needs 'question<TAB>answer<TAB>supporting IDs'", path,
                 lineno);
    ENGRAM_CHECK(rest.find('\t', tab2 + 1) == std::string::npos,
                 "{}:{}: question line has more than 3 tab-separated fields", path, lineno);
    BabiSample s;
    s.question = babi_tokenize(rest.substr(0, tab), o.lowercase);
    std::string answer = rest.substr(tab + 1, tab2 - tab - 1);
    ENGRAM_CHECK(!answer.empty() && split_whitespace(answer).size() == 1,
                 "{}:{}: the answer must be one non-empty word (comma-joined for lists), got '{}'",
                 path, lineno, answer);
    s.answer = o.lowercase ? lower_ascii(std::move(answer)) : std::move(answer);
    s.story = story;
    s.memory_end = static_cast<int32_t>(story->size());
    s.memory_begin = std::max(0, s.memory_end - o.memory_size);
    for (const auto& tok : split_whitespace(rest.substr(tab2 + 1))) {
      int64_t ref = 0;
      ENGRAM_CHECK(parse_int(tok, &ref), "{}:{}: supporting fact ID '{}' is not a number", path,
                   lineno, tok);
      ENGRAM_CHECK(ref >= 1 && ref < id && statement_of_id[ref] >= 0,
                   "{}:{}: supporting fact ID {} is not an earlier statement of this story", path,
                   lineno, ref);
      const int32_t pos = statement_of_id[ref] - s.memory_begin;
      s.supporting.push_back(pos >= 0 ? pos : -1);
    }
    s.line = lineno;
    samples.push_back(std::move(s));
  }
  return samples;
}

std::vector<BabiTaskFiles> list_babi_tasks(const std::string& dir) {
  ENGRAM_CHECK(std::filesystem::is_directory(dir), "bAbI: {} is not a directory", dir);
  std::map<int, BabiTaskFiles> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    int task;
    std::string name, split;
    if (!entry.is_regular_file() ||
        !parse_task_file_name(entry.path().filename().string(), &task, &name, &split)) {
      continue;
    }
    auto& f = found[task];
    f.task = task;
    f.name = name;
    (split == "train" ? f.train_path : f.test_path) = entry.path().string();
  }
  std::vector<BabiTaskFiles> out;
  for (auto& [task, f] : found) out.push_back(std::move(f));
  return out;
}

std::vector<int> available_babi_tasks(const std::string& dir) {
  std::vector<int> out;
  for (const auto& f : list_babi_tasks(dir)) {
    if (!f.train_path.empty() && !f.test_path.empty()) out.push_back(f.task);
  }
  return out;
}

BabiTask load_babi_task(const std::string& dir, int task, const BabiOptions& options,
                        const BabiSplitOptions& split) {
  ENGRAM_CHECK(task >= 1 && task <= 20, "bAbI: task must be 1..20, got {}", task);
  const auto tasks = list_babi_tasks(dir);
  std::string available;
  for (int t : available_babi_tasks(dir)) {
    available += (available.empty() ? "" : ", ") + std::to_string(t);
  }
  if (available.empty()) available = "none";
  auto it = std::find_if(tasks.begin(), tasks.end(), [&](const auto& f) { return f.task == task; });
  const bool has_train = it != tasks.end() && !it->train_path.empty();
  const bool has_test = it != tasks.end() && !it->test_path.empty();
  ENGRAM_CHECK(has_train && has_test,
               "bAbI task {}: no {} file qa{}_*_{}.txt in {} (tasks with both train and test files "
               "there: {})",
               task, has_train ? "test" : "train", task, has_train ? "test" : "train", dir,
               available);
  BabiTask out;
  out.task = task;
  out.name = it->name;
  out.train = read_babi_file(it->train_path, options);
  out.test = read_babi_file(it->test_path, options);
  split_validation(&out.train, &out.valid, split.valid_fraction, split.seed);
  return out;
}

void split_validation(std::vector<BabiSample>* train, std::vector<BabiSample>* valid,
                      double fraction, uint64_t seed) {
  ENGRAM_CHECK(fraction >= 0 && fraction < 1, "bAbI: valid_fraction must be in [0, 1), got {}",
               fraction);
  const size_t n = train->size();
  const auto n_valid = static_cast<size_t>(std::llround(fraction * static_cast<double>(n)));
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  core::Rng rng(seed);
  rng.shuffle(order.begin(), order.end());
  std::vector<char> is_valid(n, 0);
  for (size_t k = 0; k < n_valid; ++k) is_valid[order[k]] = 1;
  std::vector<BabiSample> kept;
  kept.reserve(n - n_valid);
  for (size_t i = 0; i < n; ++i) {
    (is_valid[i] ? *valid : kept).push_back(std::move((*train)[i]));
  }
  *train = std::move(kept);
}

void count_babi_tokens(const std::vector<BabiSample>& samples, TokenCounts* counts) {
  std::unordered_set<const std::vector<Sentence>*> seen;
  for (const auto& s : samples) {
    if (s.story && seen.insert(s.story.get()).second) {
      for (const auto& sentence : *s.story) {
        for (const auto& w : sentence) ++(*counts)[w];
      }
    }
    for (const auto& w : s.question) ++(*counts)[w];
    ++(*counts)[s.answer];
  }
}

}  // namespace engram::data
