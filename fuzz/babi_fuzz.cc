// Fuzz harness: bAbI QA files (data/babi.h: read_babi_file) with 50 memory slots and with 3 (so
// that supporting facts fall out of the window). Checks each sample: its memory window lies
// inside its story, supporting positions are -1 or inside the window, the question and answer
// are set; count_babi_tokens and babi_tokenize run on the result.
#include "engram/data/babi.h"
#include "fuzz_common.h"

namespace {

constexpr const char* kHarness = "babi";
using namespace engram::data;

void check(const std::vector<BabiSample>& samples, const BabiOptions& o) {
  int64_t prev_line = 0;
  for (const BabiSample& s : samples) {
    FUZZ_CHECK(kHarness, s.story != nullptr, "sample without a story");
    const int64_t n = static_cast<int64_t>(s.story->size());
    FUZZ_CHECK(kHarness, 0 <= s.memory_begin && s.memory_begin <= s.memory_end && s.memory_end <= n,
               "line {}: memory window [{}, {}) outside a story of {} statements", s.line, s.memory_begin,
               s.memory_end, n);
    FUZZ_CHECK(kHarness, s.memory_end - s.memory_begin <= o.memory_size, "line {}: {} memories, memory_size {}", s.line,
               s.memory_end - s.memory_begin, o.memory_size);
    const int32_t slots = s.memory_end - s.memory_begin;
    for (int32_t p : s.supporting)
      FUZZ_CHECK(kHarness, p == -1 || (p >= 0 && p < slots), "line {}: supporting position {} of {} slots", s.line, p,
                 slots);
    FUZZ_CHECK(kHarness, s.line > prev_line, "question lines not increasing: {} after {}", s.line, prev_line);
    prev_line = s.line;
    size_t words = 0;
    for (const Sentence& m : s.memory()) words += m.size();
    (void)words;
  }
  TokenCounts counts;
  count_babi_tokens(samples, &counts);
}

void run(std::string_view bytes) {
  const auto path = engram::fuzz::temp_file("qa1_fuzz_train.txt", bytes);
  BabiOptions small;
  small.memory_size = 3;
  small.lowercase = false;
  for (const BabiOptions& o : {BabiOptions{}, small})
    engram::fuzz::guard(kHarness, [&] { check(read_babi_file(path.string(), o), o); });
  if (bytes.size() <= 4096) (void)babi_tokenize(std::string(bytes));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > engram::fuzz::kMaxInputBytes) return 0;
  return engram::fuzz::guard(kHarness, [&] { run(engram::fuzz::as_text(data, size)); });
}
