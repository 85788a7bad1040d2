// Token streaming over HTTP ("stream": true: Server-Sent Events, docs/serve.md): one "token"
// event per decoded token with its α row, then a "result" event holding exactly the route's
// answer without streaming; streaming's refusals (a beam, a family that does not stream).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "serve/serve_util.h"

namespace engram::serve {
namespace {

using namespace testing;

struct Event {
  std::string name;
  json data;
};

// The events of a text/event-stream body: blocks "event: NAME\ndata: JSON" ended by a blank line.
std::vector<Event> parse_events(const std::string& body) {
  std::vector<Event> out;
  size_t at = 0;
  for (size_t end; (end = body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    const std::string block = body.substr(at, end - at);
    const size_t nl = block.find('\n');
    EXPECT_EQ(block.rfind("event: ", 0), 0u) << block;
    EXPECT_NE(nl, std::string::npos) << block;
    if (nl == std::string::npos) break;
    EXPECT_EQ(block.compare(nl + 1, 6, "data: "), 0) << block;
    out.push_back({block.substr(7, nl - 7), json::parse(block.substr(nl + 7), nullptr, false)});
  }
  EXPECT_EQ(at, body.size()) << "a partial event at the end";
  return out;
}

TEST(ServeStream, TokensThenTheWholeResultWithTheRoutesAlphaRows) {
  RunningServer s({"seq2seq"}, ServeOptions{});
  httplib::Client c = s.client();
  const std::vector<std::string> src = {golden_cases("seq2seq")[0].first, golden_cases("seq2seq")[1].first};
  // The same sentences without streaming, with alignments, each alone (as a stream decodes them:
  // a batch's products may round differently): the reference.
  json plain = {{"translations", json::array()}};
  for (const std::string& one : src) {
    auto [status, alone] = post(c, "/v1/translate", json{{"src", {one}}, {"alignments", true}});
    ASSERT_EQ(status, 200) << alone.dump();
    plain["translations"].push_back(alone["translations"][0]);
  }

  const httplib::Result r = c.Post("/v1/translate", json{{"src", src}, {"alignments", true}, {"stream", true}}.dump(),
                                   "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<Event> events = parse_events(r->body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back().name, "result");
  EXPECT_EQ(events.back().data, plain) << "the last event is the route's answer without streaming";
  // Token events, per sentence in order: step 0, 1, ...; the tokens are the translation's
  // (tgt_tokens, <eos> included) and each α row is its alignment row.
  std::vector<int> steps(src.size(), 0);
  for (size_t e = 0; e + 1 < events.size(); ++e) {
    const Event& ev = events[e];
    ASSERT_EQ(ev.name, "token");
    const size_t i = ev.data.at("index").get<size_t>();
    ASSERT_LT(i, src.size());
    const int step = steps[i]++;
    EXPECT_EQ(ev.data.at("step").get<int>(), step);
    // The first event of a sentence names the columns of its α rows.
    EXPECT_EQ(ev.data.contains("src_tokens"), step == 0);
    if (step == 0) { EXPECT_EQ(ev.data["src_tokens"], plain["translations"][i][0]["src_tokens"]); }
    const json& hyp = plain["translations"][i][0];
    ASSERT_LT(static_cast<size_t>(step), hyp["tgt_tokens"].size());
    EXPECT_EQ(ev.data.at("token"), hyp["tgt_tokens"][step]);
    const json& want = hyp["alignment"][step];
    ASSERT_EQ(ev.data.at("alpha").size(), want.size());
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_NEAR(ev.data["alpha"][k].get<double>(), want[k].get<double>(), 1e-6) << i << " " << step << " " << k;
  }
  for (size_t i = 0; i < src.size(); ++i)
    EXPECT_EQ(static_cast<size_t>(steps[i]), plain["translations"][i][0]["tgt_tokens"].size()) << i;
}

TEST(ServeStream, RefusedWithABeamAndByAFamilyThatDoesNotStream) {
  RunningServer s({"seq2seq", "pointer"}, ServeOptions{});
  httplib::Client c = s.client();
  auto [status, body] = post(c, "/v1/translate", json{{"src", "29 November 2026"}, {"stream", true}, {"beam", 3}});
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.value("error", "").find("not from a beam"), std::string::npos) << body.dump();
  std::tie(status, body) = post(c, "/v1/pointer", json{{"points", {0.1, 0.5, 0.3}}, {"stream", true}});
  EXPECT_EQ(status, 400);
  EXPECT_NE(body.value("error", "").find("'stream' is not an option of the pointer family"), std::string::npos)
      << body.dump();
}

TEST(ServeStream, SamplingStreamsTheSampledTokensAndASeedRepeats) {
  RunningServer s({"seq2seq"}, ServeOptions{});
  httplib::Client c = s.client();
  const json req = {{"src", "29 November 2026"}, {"sampling_topk", 0}, {"temperature", 3.0}, {"seed", 11}};
  auto [status, once] = post(c, "/v1/translate", req);
  ASSERT_EQ(status, 200) << once.dump();
  json streamed = req;
  streamed["stream"] = true;
  const httplib::Result r = c.Post("/v1/translate", streamed.dump(), "application/json");
  ASSERT_TRUE(r);
  const std::vector<Event> events = parse_events(r->body);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().data, once) << "the same seed, streamed or not";
}

TEST(ServeStream, SummarizeStreamsItsTokensAndTakesATargetPrefix) {
  RunningServer s({"pointer_generator"}, ServeOptions{});
  httplib::Client c = s.client();
  const std::string article = golden_cases("pointer_generator")[0].first;
  auto [status, plain] = post(c, "/v1/summarize", json{{"article", article}});
  ASSERT_EQ(status, 200) << plain.dump();
  const httplib::Result r = c.Post("/v1/summarize", json{{"article", article}, {"stream", true}}.dump(), "application/json");
  ASSERT_TRUE(r);
  const std::vector<Event> events = parse_events(r->body);
  ASSERT_EQ(events.size(), plain["tokens"].size() + 1);
  EXPECT_EQ(events.back().name, "result");
  EXPECT_EQ(events.back().data, plain);
  for (size_t t = 0; t + 1 < events.size(); ++t) {
    EXPECT_EQ(events[t].data["token"], plain["tokens"][t]["token"]) << t;
    EXPECT_EQ(events[t].data["alpha"].size(), plain["source_tokens"].size()) << t;
  }
  // A prefix of two of the article's own tokens is forced first.
  const std::string prefix = plain["source_tokens"][0].get<std::string>() + " " +
                             plain["source_tokens"][1].get<std::string>();
  json forced;
  std::tie(status, forced) = post(c, "/v1/summarize", json{{"article", article}, {"target_prefix", prefix}});
  ASSERT_EQ(status, 200) << forced.dump();
  ASSERT_GE(forced["tokens"].size(), 2u);
  EXPECT_EQ(forced["tokens"][0]["token"], plain["source_tokens"][0]);
  EXPECT_EQ(forced["tokens"][1]["token"], plain["source_tokens"][1]);
}

}  // namespace
}  // namespace engram::serve
