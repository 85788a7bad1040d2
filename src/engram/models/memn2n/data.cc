// MemN2N data side: vocabulary, encoding of bAbI samples, padded batches with temporal indices.
// Dims: B batch, N memory slots, W words per sentence, Wq question words.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "engram/core/error.h"
#include "engram/models/memn2n/model.h"

namespace engram::models {

data::Vocab build_babi_vocab(const std::vector<const std::vector<data::BabiSample>*>& sets) {
  data::TokenCounts counts;
  for (const auto* s : sets) data::count_babi_tokens(*s, &counts);
  return data::Vocab::build(counts);
}

int longest_babi_sentence(const std::vector<const std::vector<data::BabiSample>*>& sets) {
  size_t longest = 0;
  for (const auto* set : sets)
    for (const data::BabiSample& s : *set) {
      longest = std::max(longest, s.question.size());
      for (const data::Sentence& m : s.memory()) longest = std::max(longest, m.size());
    }
  return static_cast<int>(longest);
}

void encode_babi(const std::vector<data::BabiSample>& samples, int task, const data::Vocab& vocab,
                 Memn2nDataset* out) {
  std::unordered_map<const void*, int32_t> story_index;  // shared story -> encoded index
  for (const data::BabiSample& s : samples) {
    auto [it, added] = story_index.try_emplace(s.story.get(), static_cast<int32_t>(out->stories.size()));
    if (added) {
      auto& enc = out->stories.emplace_back();
      enc.reserve(s.story->size());
      for (const data::Sentence& sentence : *s.story) enc.push_back(vocab.encode(sentence));
    }
    Memn2nSample m;
    m.story = it->second;
    m.begin = s.memory_begin;
    m.end = s.memory_end;
    m.query = vocab.encode(s.question);
    ENGRAM_CHECK(vocab.contains(s.answer), "bAbI task {} line {}: answer '{}' is not in the vocabulary", task, s.line,
                 s.answer);
    m.answer = vocab.id(s.answer);
    m.supporting = s.supporting;
    m.task = task;
    out->samples.push_back(std::move(m));
  }
}

namespace {

// n distinct time indices for n memories (slot 0 = oldest): most recent = smallest.
void time_indices(int n, int memory_size, float random_noise, core::Rng* rng, int32_t* out) {
  if (random_noise <= 0.0f) {
    for (int i = 0; i < n; ++i) out[i] = n - 1 - i;
    return;
  }
  ENGRAM_CHECK(rng != nullptr, "memn2n batch: random noise needs an Rng");
  const int max_blank = static_cast<int>(std::ceil(n * static_cast<double>(random_noise)));
  const int total = n + static_cast<int>(rng->below(static_cast<uint64_t>(max_blank) + 1));
  std::vector<int32_t> perm(total);
  std::iota(perm.begin(), perm.end(), 0);
  rng->shuffle(perm.begin(), perm.end());
  perm.resize(n);
  for (auto& t : perm) t = std::min(t, memory_size - 1);
  std::sort(perm.begin(), perm.end(), std::greater<>());  // oldest slot gets the largest index
  std::copy(perm.begin(), perm.end(), out);
}

}  // namespace

Memn2nBatch make_memn2n_batch(const Memn2nDataset& data, std::span<const int32_t> indices, int memory_size,
                              float random_noise, core::Rng* rng, int min_slots) {
  ENGRAM_CHECK(!indices.empty(), "memn2n batch: no samples");
  ENGRAM_CHECK(memory_size >= 1, "memn2n batch: memory_size must be >= 1, got {}", memory_size);
  Memn2nBatch b;
  b.batch = static_cast<int>(indices.size());
  b.slots = std::max(1, min_slots);
  b.words = 1;
  b.query_words = 1;
  b.offset.resize(b.batch);
  for (int i = 0; i < b.batch; ++i) {
    const int32_t idx = indices[i];
    ENGRAM_CHECK(idx >= 0 && idx < static_cast<int32_t>(data.samples.size()), "memn2n batch: sample {} of {}", idx,
                 data.samples.size());
    const Memn2nSample& s = data.samples[idx];
    const auto& story = data.stories[s.story];
    const int n = std::min(s.end - s.begin, memory_size);
    b.offset[i] = (s.end - s.begin) - n;
    b.slots = std::max(b.slots, n);
    for (int k = s.end - n; k < s.end; ++k) b.words = std::max(b.words, static_cast<int>(story[k].size()));
    b.query_words = std::max(b.query_words, static_cast<int>(s.query.size()));
  }
  const int N = b.slots, W = b.words;
  b.memory.assign(static_cast<size_t>(b.batch) * N * W, 0);
  b.time.assign(static_cast<size_t>(b.batch) * N, -1);
  b.mask.assign(static_cast<size_t>(b.batch) * N, 0.0f);
  b.query.assign(static_cast<size_t>(b.batch) * b.query_words, 0);
  b.answer.resize(b.batch);
  for (int i = 0; i < b.batch; ++i) {
    const Memn2nSample& s = data.samples[indices[i]];
    const auto& story = data.stories[s.story];
    const int first = s.begin + b.offset[i], n = s.end - first;
    for (int k = 0; k < n; ++k) {
      const auto& sentence = story[first + k];
      std::copy(sentence.begin(), sentence.end(), b.memory.begin() + (static_cast<int64_t>(i) * N + k) * W);
      b.mask[static_cast<size_t>(i) * N + k] = 1.0f;
    }
    time_indices(n, memory_size, random_noise, rng, b.time.data() + static_cast<int64_t>(i) * N);
    std::copy(s.query.begin(), s.query.end(), b.query.begin() + static_cast<int64_t>(i) * b.query_words);
    b.answer[i] = s.answer;
  }
  return b;
}

}  // namespace engram::models
