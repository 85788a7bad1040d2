// bAbI QA reader (Weston et al. 2015, v1.2 files "qaN_name_{train,test}.txt") for End-To-End
// Memory Networks. File format: "ID text" lines, IDs restarting at 1 for each story; question
// lines are "ID question<TAB>answer<TAB>supporting IDs". Each question becomes one sample whose
// memory is the most recent memory_size statements before it (question lines are not memories),
// with the supporting-fact IDs mapped to memory positions. Multi-word answers of tasks 8 and 19
// ("apple,football", "n,w") stay one answer string = one vocabulary entry, as in the MemN2N paper.
//
// Tokenisation: split on whitespace, strip leading/trailing ASCII punctuation from each token
// ("bathroom." -> "bathroom"), lowercase ASCII letters (BabiOptions::lowercase); answers are only
// lowercased.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engram/data/vocab.h"

namespace engram::data {

using Sentence = std::vector<std::string>;

struct BabiOptions {
  int memory_size = 50;  // most recent statements kept as memory
  bool lowercase = true;
};

struct BabiSample {
  // Statements of the story (shared by all questions of that story); this question's memory is
  // the window [memory_begin, memory_end) of it, oldest first.
  std::shared_ptr<const std::vector<Sentence>> story;
  int32_t memory_begin = 0;
  int32_t memory_end = 0;
  Sentence question;
  std::string answer;
  // Memory positions (0 = oldest memory slot) of the supporting facts, in file order; -1 for a
  // fact that fell outside the memory window (never the case in the v1.2 files with 50 slots).
  std::vector<int32_t> supporting;
  int64_t line = 0;  // 1-based line of the question in its file

  std::span<const Sentence> memory() const {
    return {story->data() + memory_begin, static_cast<size_t>(memory_end - memory_begin)};
  }
};

// Parses one bAbI file. Malformed input (missing or non-numeric ID, an ID that neither restarts
// at 1 nor follows the previous one, a question line without answer or supporting-IDs field, a
// statement line holding a '?' (a question whose tab-separated fields are missing), a supporting
// ID that is not an earlier statement of the same story) throws engram::Error "PATH:LINE: ...".
// Blank lines are ignored.
std::vector<BabiSample> read_babi_file(const std::string& path, const BabiOptions& options = {});

// The files of one task found in a directory (a missing file has an empty path).
struct BabiTaskFiles {
  int task = 0;      // 1..20
  std::string name;  // "single-supporting-fact"
  std::string train_path;
  std::string test_path;
};

// Tasks 1..20 that have at least one file in dir, sorted by task number.
std::vector<BabiTaskFiles> list_babi_tasks(const std::string& dir);
// Task numbers that have both a train and a test file in dir (e.g. en-10k lacks qa3 train).
std::vector<int> available_babi_tasks(const std::string& dir);

struct BabiSplitOptions {
  double valid_fraction = 0.1;  // of the training questions, held out (MemN2N paper: 10%)
  uint64_t seed = 1;
};

struct BabiTask {
  int task = 0;
  std::string name;
  std::vector<BabiSample> train, valid, test;
};

// Loads task `task` from dir and holds out a validation split. A missing file is an error that
// names the expected file pattern and lists the tasks that are available in dir.
BabiTask load_babi_task(const std::string& dir, int task, const BabiOptions& options = {},
                        const BabiSplitOptions& split = {});

// Moves round(fraction * size) randomly chosen samples (core::Rng(seed)) from *train to *valid;
// both keep their original relative order.
void split_validation(std::vector<BabiSample>* train, std::vector<BabiSample>* valid,
                      double fraction, uint64_t seed);

// Counts memory, question and answer tokens (answers as whole strings) for Vocab::build.
void count_babi_tokens(const std::vector<BabiSample>& samples, TokenCounts* counts);

// The bAbI tokenisation described above.
Sentence babi_tokenize(const std::string& text, bool lowercase = true);

}  // namespace engram::data
