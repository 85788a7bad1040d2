// Dynamic batching: one queue of requests per model and a pool of worker threads shared by all
// models. A worker takes the model whose oldest request has waited longest, gathers the requests
// behind it up to max_batch units, waits until max_wait_ms after the oldest arrived for the batch
// to fill, and answers the batch with one LoadedModel::run_requests call. The models' weights are shared
// and only read; every serve call builds its own graph and arena, so workers share no mutable
// state. A request whose client stopped waiting (Job::abandon) before its batch started is skipped.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/models/registry.h"
#include "engram/serve/metrics.h"

namespace engram::serve {

using Clock = std::chrono::steady_clock;

// One request in flight: the request as its model parsed it (LoadedModel::parse_request, once)
// and, once answered, the status and response body. A streaming request (options.stream) also
// queues its token events (models::EventSink) for the HTTP thread that sends them (next()).
class Job final : public models::EventSink {
 public:
  explicit Job(std::unique_ptr<models::Request> request)
      : request_(std::move(request)), units_(request_->units), queued_(Clock::now()) {
    if (request_->options.stream) request_->events = this;
  }
  const models::Request& request() const { return *request_; }
  int units() const { return units_; }
  Clock::time_point queued() const { return queued_; }

  void finish(int status, nlohmann::json body);
  // Waits until answered or `deadline`; true when answered (then status() and body() are set).
  bool wait_until(Clock::time_point deadline);
  // The client stopped waiting: a batch not started yet skips the job. False when already started.
  bool abandon();
  // Claims the job for a batch; false when it was abandoned.
  bool start();
  int status() const { return status_; }
  const nlohmann::json& body() const { return body_; }

  // A token event of input `input` (the worker thread): queued with "index": input.
  void token(int input, nlohmann::json event) override;
  enum class Next { kEvent, kDone, kTimeout };
  // The next queued event (kEvent, into *event), else kDone once answered (status() and body()
  // are set), else waits; kTimeout at `deadline`.
  Next next(nlohmann::json* event, Clock::time_point deadline);

 private:
  std::unique_ptr<models::Request> request_;
  int units_;
  Clock::time_point queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false, abandoned_ = false, done_ = false;
  int status_ = 0;
  nlohmann::json body_;
  std::deque<nlohmann::json> events_;  // token events not sent yet (bounded by the request's caps)
};

struct BatcherOptions {
  int workers = 2;
  int threads = 1;  // threads of each worker (its own and its team's), set once in each worker
  int max_batch = 32;
  int max_wait_ms = 5;
  int max_queue = 1024;  // units per model
};

struct BatchedModel {
  std::string name;
  const models::LoadedModel* model;  // read only, shared by the workers
};

class Batcher {
 public:
  Batcher(std::vector<BatchedModel> models, const BatcherOptions& options, Metrics& metrics);
  ~Batcher();  // stop()
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues `job` for model `index`; false (nothing queued) when that model's queue would then
  // hold more than max_queue units (the server answers 503), or after stop().
  bool submit(size_t index, std::shared_ptr<Job> job);
  // Answers every queued job, then joins the workers. Idempotent.
  void stop();
  int64_t queued_units(size_t index) const;

 private:
  struct Queue {
    std::deque<std::shared_ptr<Job>> jobs;
    int64_t units = 0;
  };
  void work();
  void run_batch(size_t index, std::vector<std::shared_ptr<Job>>& batch);

  std::vector<BatchedModel> models_;
  BatcherOptions options_;
  Metrics& metrics_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Queue> queues_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace engram::serve
