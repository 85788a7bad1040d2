// The Batcher alone, over a model that records the batches it is given: batches never exceed
// max_batch units and gather requests that wait together; a request that fails its batch is
// retried alone so the others are answered; an abandoned request is never decoded; a full queue
// refuses; stop() answers what is queued.
#include <gtest/gtest.h>

#include <mutex>

#include "engram/core/error.h"
#include "engram/nn/param_store.h"
#include "engram/serve/batcher.h"

namespace engram::serve {
namespace {

using nlohmann::json;

// Answers {"x": v} with {"x": v}; a batch holding {"bad": true} throws an engram::Error.
class EchoModel : public models::LoadedModel {
 public:
  std::string family() const override { return "echo"; }
  const std::filesystem::path& dir() const override { return dir_; }
  nn::ParamStore& params() override { return params_; }
  std::string run_line(const std::string& line) override { return line; }
  std::string input_help() const override { return "anything"; }
  const models::InferenceSpec& inference() const override {
    static const models::InferenceSpec spec{{"x", "units", "bad"}, {}};
    return spec;
  }
  std::unique_ptr<models::Request> parse_request(const json& r, const models::ServeLimits&) const override {
    auto q = std::make_unique<models::RequestOf<json>>();
    q->inputs = {r};
    q->units = r.value("units", 1);
    return q;
  }
  std::vector<json> run_requests(std::span<const models::Request* const> requests) const override {
    int units = 0;
    std::vector<json> out;
    std::vector<int> xs;
    for (const models::Request* q : requests) {
      const json& r = dynamic_cast<const models::RequestOf<json>&>(*q).inputs.at(0);
      ENGRAM_CHECK(!r.value("bad", false), "a bad request");
      units += q->units;
      out.push_back({{"x", r.value("x", -1)}});
      xs.push_back(r.value("x", -1));
    }
    const std::lock_guard<std::mutex> lock(mu_);
    batches_.push_back(units);
    seen_.insert(seen_.end(), xs.begin(), xs.end());
    return out;
  }
  std::vector<int> batches() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  std::vector<int> seen() const {
    const std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  std::filesystem::path dir_ = "echo";
  nn::ParamStore params_;
  mutable std::mutex mu_;
  mutable std::vector<int> batches_, seen_;
};

// A job of `units` units holding `r` (parsed as EchoModel::parse_request would).
std::shared_ptr<Job> job(json r, int units) {
  auto q = std::make_unique<models::RequestOf<json>>();
  q->inputs = {std::move(r)};
  q->units = units;
  return std::make_shared<Job>(std::move(q));
}

TEST(Batcher, BatchesUpToMaxBatchAndIsolatesABadRequest) {
  EchoModel model;
  Metrics metrics;
  Batcher b({{"echo", &model}}, BatcherOptions{1, 1, 4, 100, 1024}, metrics);
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 10; ++i) {
    jobs.push_back(job(i == 5 ? json{{"x", i}, {"bad", true}} : json{{"x", i}}, 1));
    ASSERT_TRUE(b.submit(0, jobs.back()));
  }
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(jobs[i]->wait_until(deadline)) << i;
    if (i == 5) {
      EXPECT_EQ(jobs[i]->status(), 400);
      EXPECT_EQ(jobs[i]->body()["error"], "a bad request");
    } else {
      EXPECT_EQ(jobs[i]->status(), 200) << i;
      EXPECT_EQ(jobs[i]->body()["x"], i) << "each job gets its own answer";
    }
  }
  int most = 0;
  for (int u : model.batches()) most = std::max(most, u);
  EXPECT_LE(most, 4) << "max_batch 4";
  EXPECT_GE(most, 2) << "ten requests queued together are batched";
}

TEST(Batcher, AbandonedJobsAreSkippedAndAFullQueueRefuses) {
  EchoModel model;
  Metrics metrics;
  Batcher b({{"echo", &model}}, BatcherOptions{1, 1, 64, 300, 3}, metrics);
  auto a = job(json{{"x", 1}}, 1);
  auto c = job(json{{"x", 2}}, 2);
  ASSERT_TRUE(b.submit(0, a));
  ASSERT_TRUE(b.submit(0, c));
  EXPECT_EQ(b.queued_units(0), 3);
  EXPECT_FALSE(b.submit(0, job(json{{"x", 3}}, 1))) << "max_queue 3 units";
  EXPECT_TRUE(a->abandon());  // the client gave up before the batch (300 ms) started
  ASSERT_TRUE(c->wait_until(Clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(c->status(), 200);
  EXPECT_FALSE(c->abandon()) << "started already";
  EXPECT_EQ(model.seen(), std::vector<int>{2});
}

TEST(Batcher, StopAnswersWhatIsQueued) {
  EchoModel model;
  Metrics metrics;
  auto b = std::make_unique<Batcher>(std::vector<BatchedModel>{{"echo", &model}}, BatcherOptions{2, 1, 8, 5000, 64},
                                     metrics);
  std::vector<std::shared_ptr<Job>> jobs;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back(job(json{{"x", i}}, 1));
    ASSERT_TRUE(b->submit(0, jobs.back()));
  }
  b->stop();  // before the 5 s wait is over: the queued jobs are decoded now
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(jobs[i]->wait_until(Clock::now())) << i;
    EXPECT_EQ(jobs[i]->body()["x"], i);
  }
  EXPECT_FALSE(b->submit(0, job(json{{"x", 9}}, 1))) << "a stopped batcher queues nothing";
}

}  // namespace
}  // namespace engram::serve
