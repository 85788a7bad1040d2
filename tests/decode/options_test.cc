// The one decode-options schema (decode/options.h): JSON fields read by type and range, a field a
// family does not honour refused by name, "n_best alone means beam = n_best", the family's
// defaults kept where a field is absent; and the batched runner (decode/runner.h) returns each
// input's search in the callers' order whatever the chunking.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "engram/core/error.h"
#include "io/expect_error.h"
#include "engram/decode/options.h"
#include "engram/decode/runner.h"
#include "decode/toy_model.h"

namespace engram::decode {
namespace {

using nlohmann::json;

using io::testing::error_of;

OptionSet text_family() {
  OptionSet s{{"beam", "n_best", "alpha", "max_length", "alignments", "precision"}, {}};
  s.defaults.max_length = 100;
  return s;
}

TEST(DecodeOptions, ReadsHonouredFieldsByTypeAndKeepsDefaults) {
  std::vector<std::string> given;
  const DecodeOptions o =
      options_from_json(json{{"beam", 4}, {"alpha", 0.6}, {"alignments", true}, {"precision", "bf16"}, {"src", "x"}},
                        text_family(), "text", &given);
  EXPECT_EQ(o.beam, 4);
  EXPECT_FLOAT_EQ(o.alpha, 0.6f);
  EXPECT_TRUE(o.alignments);
  EXPECT_EQ(o.precision, Precision::kBf16);
  EXPECT_EQ(o.max_length, 100) << "the family's default";
  EXPECT_EQ(given, (std::vector<std::string>{"beam", "alpha", "precision", "alignments"}));
  EXPECT_EQ(options_from_json(json{{"precision", "int8"}}, text_family(), "text").precision, Precision::kInt8);
  // Absent and null fields keep the defaults.
  EXPECT_EQ(options_from_json(json{{"beam", nullptr}}, text_family(), "text"), text_family().defaults);
}

TEST(DecodeOptions, NBestAloneSetsTheBeam) {
  EXPECT_EQ(options_from_json(json{{"n_best", 3}}, text_family(), "text").beam, 3);
  // Given both, n_best > beam is an error, not a silent change.
  EXPECT_NE(error_of([] { options_from_json(json{{"n_best", 3}, {"beam", 2}}, text_family(), "text"); })
                .find("n_best 3 must be in [1, beam = 2]"),
            std::string::npos);
}

TEST(DecodeOptions, RefusesWhatTheFamilyDoesNotHonourByName) {
  const std::string e = error_of([] { options_from_json(json{{"views", 4}}, text_family(), "text"); });
  EXPECT_NE(e.find("'views' is not an option of the text family"), std::string::npos) << e;
  EXPECT_NE(e.find("beam, n_best"), std::string::npos) << "lists the options it has: " << e;
}

TEST(DecodeOptions, RefusesWrongTypesAndRanges) {
  const OptionSet all{option_names(), {}};
  const std::vector<std::pair<json, std::string>> cases = {
      {json{{"beam", "4"}}, "'beam' must be an integer, got string"},
      {json{{"beam", 2.5}}, "'beam' must be an integer, got number"},
      {json{{"beam", 0}}, "beam 0 must be in [1, 1024]"},
      {json{{"beam", 1ll << 40}}, "'beam' is 1099511627776; it must be in"},
      {json{{"beam", 18446744073709551615ull}}, "'beam' is out of range"},
      {json{{"alpha", -1}}, "alpha -1 must be in [0, 10]"},
      {json{{"alpha", 1e300}}, "'alpha' must be a finite number"},
      {json{{"temperature", 0}}, "temperature 0 must be in (0, 100]"},
      {json{{"alignments", 1}}, "'alignments' must be true or false, got number"},
      {json{{"precision", "int4"}}, "'precision' must be one of fp32|bf16|int8"},
      {json{{"seed", -1}}, "'seed' must not be negative"},
      {json{{"views", 65}}, "views 65 must be in [1, 64]"},
      {json{{"batch", 0}}, "batch 0 must be in [1, 4096]"},
  };
  for (const auto& [request, message] : cases) {
    const std::string e = error_of([&] { options_from_json(request, all, "any"); });
    EXPECT_NE(e.find(message), std::string::npos) << request.dump() << " -> " << e;
  }
}

// A model's decode: section (RUN/decode.yaml) is read as the config reader reads any key.
TEST(ModelDefaults, ReadAsConfigKeysWithOneLineErrors) {
  const ModelDefaults m = read_model_defaults(YAML::Load("{alpha: 0.6, precision: bf16, beam: 4}"), "d.yaml");
  EXPECT_EQ(m.fields, (std::vector<std::string>{"beam", "alpha", "precision"})) << "declaration order";
  EXPECT_FLOAT_EQ(m.values.alpha, 0.6f);
  EXPECT_EQ(m.values.precision, Precision::kBf16);
  EXPECT_TRUE(read_model_defaults(YAML::Node(), "d.yaml").fields.empty());
  const OptionSet text = text_family();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{alfa: 0.6}", "unknown config key 'decode.alfa' in d.yaml (did you mean 'decode.alpha'?)"},
      {"{beam: two}", "decode.beam"},
      {"{alpha: 11}", "d.yaml: decode: search: alpha 11 must be in [0, 10]"},
      {"{n_best: 3, beam: 2}", "d.yaml: decode: search: n_best 3 must be in [1, beam = 2]"},
      {"{precision: int4}", "decode.precision"},
      {"[0.6]", "decode"},
      {"{views: 2}", "d.yaml: decode.views is not an option of the text family (its options: beam, n_best"},
  };
  for (const auto& [yaml, message] : cases) {
    const std::string e = error_of([&] { read_model_defaults(YAML::Load(yaml), "d.yaml", &text, "text"); });
    EXPECT_NE(e.find(message), std::string::npos) << yaml << " -> " << e;
  }
}

// The layering every front end shares: the family's defaults, the model's over them, the given
// fields over both.
TEST(ModelDefaults, LieUnderGivenFieldsAndOverTheFamilys) {
  const OptionSet text = text_family();  // max_length 100
  const ModelDefaults m = read_model_defaults(YAML::Load("{beam: 5, alpha: 0.6}"), "d.yaml", &text, "text");
  DecodeOptions o = with_model_defaults(text.defaults, {}, m);
  EXPECT_EQ(o.beam, 5);
  EXPECT_FLOAT_EQ(o.alpha, 0.6f);
  EXPECT_EQ(o.max_length, 100) << "the family's default where the model names nothing";
  std::vector<std::string> given;
  DecodeOptions asked = options_from_json(json{{"alpha", 0}}, text, "text", &given);
  o = with_model_defaults(asked, given, m);
  EXPECT_FLOAT_EQ(o.alpha, 0.0f) << "an explicit field overrides the model's";
  EXPECT_EQ(o.beam, 5);
  asked = options_from_json(json{{"n_best", 8}}, text, "text", &given);
  o = with_model_defaults(asked, given, m);
  EXPECT_EQ(o.beam, 8) << "n_best given alone raises the model's beam";
  EXPECT_EQ(o.n_best, 8);
  const ModelDefaults nbest = read_model_defaults(YAML::Load("{n_best: 4}"), "d.yaml", &text, "text");
  EXPECT_EQ(with_model_defaults(text.defaults, {}, nbest).beam, 4) << "the model's n_best alone: beam = n_best";
  asked = options_from_json(json{{"beam", 2}}, text, "text", &given);
  o = with_model_defaults(asked, given, nbest);
  EXPECT_EQ(o.beam, 2);
  EXPECT_EQ(o.n_best, 2) << "an explicit beam caps the model's n_best";
  const OptionSet all{option_names(), {}};
  asked = options_from_json(json{{"stream", true}}, all, "any", &given);
  o = with_model_defaults(asked, given, m);
  EXPECT_TRUE(o.stream);
  EXPECT_EQ(o.beam, 1) << "a stream asked for is greedy, whatever the model's beam";
  EXPECT_FLOAT_EQ(o.alpha, 0.6f);
}

TEST(DecodeOptions, SearchPartCarriesEveryField) {
  DecodeOptions o;
  o.beam = 5, o.n_best = 2, o.alpha = 0.7f, o.coverage_penalty = 0.2f, o.min_length = 3, o.max_length = 40;
  o.max_length_ratio = 1.5f, o.max_length_offset = 4, o.block_ngram_repeat = 2, o.alignments = true;
  const SearchOptions s = o.search();
  EXPECT_EQ(s.beam, 5);
  EXPECT_EQ(s.n_best, 2);
  EXPECT_FLOAT_EQ(s.alpha, 0.7f);
  EXPECT_FLOAT_EQ(s.coverage_penalty, 0.2f);
  EXPECT_EQ(s.min_length, 3);
  EXPECT_EQ(s.max_length, 40);
  EXPECT_FLOAT_EQ(s.max_length_ratio, 1.5f);
  EXPECT_EQ(s.max_length_offset, 4);
  EXPECT_EQ(s.block_ngram_repeat, 2);
  EXPECT_TRUE(s.alignments);
}

TEST(BatchedRunner, ChunksInLengthOrderAndRestoresTheCallersOrder) {
  // Five sources of lengths 3, 1, 4, 1, 2: whatever the chunk size, each input gets the search it
  // gets alone.
  const std::vector<std::vector<int32_t>> sources = {{3, 4, 5}, {2}, {3, 3, 4, 5}, {5}, {4, 2}};
  std::vector<int> lengths;
  for (const auto& s : sources) lengths.push_back(static_cast<int>(s.size()));
  const toy::ToyModel model(7, toy::random_dist(7, 11));
  SearchOptions so;
  so.beam = 3;
  so.max_length = 6;
  core::Graph g(false);
  std::vector<std::vector<int32_t>> alone;
  for (const auto& s : sources) alone.push_back(search(g, model, SourceBatch::from_ids({s}), so)[0][0].ids);
  for (const int batch : {1, 2, 5, 64}) {
    std::vector<std::vector<size_t>> chunks;
    const auto out = run_batched(g, model, lengths, batch, so, [&](std::span<const size_t> chunk) {
      chunks.emplace_back(chunk.begin(), chunk.end());
      std::vector<std::vector<int32_t>> ids;
      for (size_t i : chunk) ids.push_back(sources[i]);
      return SourceBatch::from_ids(ids);
    });
    ASSERT_EQ(out.size(), sources.size());
    for (size_t i = 0; i < sources.size(); ++i) EXPECT_EQ(out[i].at(0).ids, alone[i]) << "batch " << batch << " input " << i;
    if (batch == 2) {
      EXPECT_EQ(chunks, (std::vector<std::vector<size_t>>{{2}, {4, 0}, {1, 3}})) << "length order, stable, run longest first";
    }
    if (batch == 1) {
      EXPECT_EQ(chunks, (std::vector<std::vector<size_t>>{{0}, {1}, {2}, {3}, {4}})) << "unsorted: input order";
    }
  }
}

TEST(BatchedRunner, EachChunkSamplesWithItsOwnSeed) {
  // Eight copies of one source, one per chunk: sampled with one seed for every chunk they would all
  // draw the same output. The first chunk samples as search() does with the options' seed.
  const std::vector<std::vector<int32_t>> sources(8, std::vector<int32_t>{4, 5});
  const std::vector<int> lengths(8, 2);
  const toy::ToyModel model(7, toy::random_dist(7, 3));
  SearchOptions so;
  so.sampling_topk = 0;
  so.max_length = 6;
  so.seed = 9;
  core::Graph g(false);
  const auto out = run_batched(g, model, lengths, 1, so, [&](std::span<const size_t> chunk) {
    return SourceBatch::from_ids({sources[chunk[0]]});
  });
  EXPECT_EQ(out[0].at(0).ids, search(g, model, SourceBatch::from_ids({sources[0]}), so)[0][0].ids);
  std::set<std::vector<int32_t>> distinct;
  for (const auto& h : out) distinct.insert(h.at(0).ids);
  EXPECT_GE(distinct.size(), 4u) << "the chunks drew alike";
  // Sorted chunks run longest first, but each keeps its seed: the first chunk in length order
  // (inputs 0 and 1, equal lengths keep their order) draws as search() does with the options' seed.
  const auto two = run_batched(g, model, lengths, 2, so, [&](std::span<const size_t> chunk) {
    return SourceBatch::from_ids({sources[chunk[0]], sources[chunk[1]]});
  });
  const auto first = search(g, model, SourceBatch::from_ids({sources[0], sources[1]}), so);
  EXPECT_EQ(two[0].at(0).ids, first[0][0].ids);
  EXPECT_EQ(two[1].at(0).ids, first[1][0].ids);
}

}  // namespace
}  // namespace engram::decode

namespace engram::decode {
namespace {

// Target prefixes (SourceBatch::prefixes): the prefix is forced at the model's own
// log-probabilities, then greedy decoding goes on from it exactly as the toy model's arg-max would
// (worked out here from its distribution); beam hypotheses all start with it and beam 1 equals
// greedy; the max length counts the free tokens; <eos> in a prefix is an error.
TEST(TargetPrefix, ForcedThenFreeInGreedyAndBeam) {
  const int vocab = 8;
  const toy::ToyModel::Dist dist = toy::random_dist(vocab, 5);
  const toy::ToyModel model(vocab, dist);
  SearchOptions so;
  so.max_length = 6;
  SourceBatch src = SourceBatch::from_ids({{4, 5}, {6}, {7, 4, 5}});
  src.prefixes = {{5, 6}, {}, {7}};
  core::Graph g(false);
  const std::vector<Hypothesis> greedy = greedy_search(g, model, src, so);
  for (int s = 0; s < 3; ++s) {
    // The expected output: the prefix, then arg-max until <eos> or |P| + L tokens.
    std::vector<int32_t> ids;
    double log_prob = 0;
    const int limit = static_cast<int>(src.prefixes[s].size()) + max_output_length(src.lengths[s], so);
    bool finished = false;
    while (static_cast<int>(ids.size()) < limit) {
      const std::vector<double> p = dist(src.ids[s], ids);
      int32_t tok = static_cast<int32_t>(std::max_element(p.begin(), p.end()) - p.begin());
      if (ids.size() < src.prefixes[s].size()) tok = src.prefixes[s][ids.size()];
      log_prob += std::log(static_cast<float>(p[tok]));
      if (tok == toy::kEos) {
        finished = true;
        break;
      }
      ids.push_back(tok);
    }
    EXPECT_EQ(greedy[s].ids, ids) << "sentence " << s;
    EXPECT_EQ(greedy[s].finished, finished) << "sentence " << s;
    EXPECT_NEAR(greedy[s].log_prob, log_prob, 1e-4) << "sentence " << s;
  }
  SearchOptions bo = so;
  bo.beam = 3;
  bo.n_best = 3;
  const auto beams = beam_search(g, model, src, bo);
  for (int s = 0; s < 3; ++s)
    for (const Hypothesis& h : beams[s]) {
      ASSERT_GE(h.ids.size(), src.prefixes[s].size());
      EXPECT_TRUE(std::equal(src.prefixes[s].begin(), src.prefixes[s].end(), h.ids.begin())) << "sentence " << s;
    }
  SearchOptions one = so;
  one.beam = 1;
  const auto single = beam_search(g, model, src, one);
  for (int s = 0; s < 3; ++s) EXPECT_EQ(single[s].at(0).ids, greedy[s].ids) << "beam 1 == greedy, sentence " << s;
  src.prefixes[1] = {toy::kEos};
  EXPECT_NE(error_of([&] { greedy_search(g, model, src, so); }).find("a target prefix holds <eos>"), std::string::npos);
  src.prefixes.resize(2);
  EXPECT_NE(error_of([&] { beam_search(g, model, src, bo); }).find("2 target prefixes for 3 sentences"),
            std::string::npos);
}

}  // namespace
}  // namespace engram::decode

namespace engram::decode {
namespace {

// Token streaming (SearchOptions::on_token): greedy reports each sentence's tokens in order as
// they are chosen, <eos> included, each with its step's α row, the same as the finished
// hypotheses; beam search refuses it.
TEST(TokenStreaming, GreedyReportsEveryTokenWithItsAlpha) {
  const toy::ToyModel model(8, toy::random_dist(8, 9));
  SourceBatch src = SourceBatch::from_ids({{4, 5, 6}, {6, 4}});
  SearchOptions so;
  so.max_length = 5;
  so.alignments = true;
  std::vector<std::vector<int32_t>> tokens(2);
  std::vector<std::vector<float>> alphas(2);
  so.on_token = [&](int s, int32_t tok, std::span<const float> a) {
    tokens[s].push_back(tok);
    alphas[s].insert(alphas[s].end(), a.begin(), a.end());
  };
  core::Graph g(false);
  const std::vector<Hypothesis> hyps = greedy_search(g, model, src, so);
  for (int s = 0; s < 2; ++s) {
    std::vector<int32_t> want = hyps[s].ids;
    if (hyps[s].finished) want.push_back(toy::kEos);
    EXPECT_EQ(tokens[s], want) << "sentence " << s;
    EXPECT_EQ(alphas[s], hyps[s].alignment) << "sentence " << s;
  }
  so.beam = 2;
  EXPECT_NE(error_of([&] { beam_search(g, model, src, so); }).find("token streaming is greedy or sampling only"),
            std::string::npos);
}

}  // namespace
}  // namespace engram::decode
