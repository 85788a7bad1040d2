// The per-model queues and the worker pool (batcher.h).
#include "engram/serve/batcher.h"

#include <fmt/format.h>

#include <algorithm>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"

namespace engram::serve {

using nlohmann::json;

void Job::finish(int status, json body) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    body_ = std::move(body);
    done_ = true;
  }
  cv_.notify_all();
}

bool Job::wait_until(Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return done_; });
}

void Job::token(int input, json event) {
  event["index"] = input;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

Job::Next Job::next(json* event, Clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_until(lock, deadline, [&] { return done_ || !events_.empty(); })) return Next::kTimeout;
  if (events_.empty()) return Next::kDone;
  *event = std::move(events_.front());
  events_.pop_front();
  return Next::kEvent;
}

bool Job::abandon() {
  const std::lock_guard<std::mutex> lock(mu_);
  if (started_) return false;
  abandoned_ = true;
  return true;
}

bool Job::start() {
  const std::lock_guard<std::mutex> lock(mu_);
  if (abandoned_) return false;
  started_ = true;
  return true;
}

Batcher::Batcher(std::vector<BatchedModel> models, const BatcherOptions& options, Metrics& metrics)
    : models_(std::move(models)), options_(options), metrics_(metrics), queues_(models_.size()) {
  ENGRAM_CHECK(options.workers >= 1 && options.max_batch >= 1 && options.max_wait_ms >= 0 && options.max_queue >= 1,
               "batcher: workers {}, max_batch {}, max_queue {} must be >= 1 and max_wait_ms {} >= 0", options.workers,
               options.max_batch, options.max_queue, options.max_wait_ms);
  for (int i = 0; i < options.workers; ++i) workers_.emplace_back([this] { work(); });
}

Batcher::~Batcher() { stop(); }

bool Batcher::submit(size_t index, std::shared_ptr<Job> job) {
  ENGRAM_CHECK(index < queues_.size(), "batcher: model {} of {}", index, queues_.size());
  int64_t units = 0;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    Queue& q = queues_[index];
    if (stopping_ || q.units + job->units() > options_.max_queue) return false;
    q.units += job->units();
    units = q.units;
    q.jobs.push_back(std::move(job));
  }
  metrics_.queue(models_[index].name, units);
  cv_.notify_all();
  return true;
}

void Batcher::stop() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

int64_t Batcher::queued_units(size_t index) const {
  const std::lock_guard<std::mutex> lock(mu_);
  return queues_.at(index).units;
}

void Batcher::work() {
  core::kernels::set_blas_threads(options_.threads);  // this thread's team size, once
  const auto max_wait = std::chrono::milliseconds(options_.max_wait_ms);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // A model is ready when its queue holds max_batch units or its oldest request has waited
    // max_wait_ms; of the ready ones, the one whose oldest request came first.
    const Clock::time_point now = Clock::now();
    size_t pick = queues_.size();
    Clock::time_point wake = Clock::time_point::max();  // the earliest deadline of a model not ready
    for (size_t i = 0; i < queues_.size(); ++i) {
      if (queues_[i].jobs.empty()) continue;
      const Clock::time_point deadline = queues_[i].jobs.front()->queued() + max_wait;
      if (queues_[i].units >= options_.max_batch || stopping_ || now >= deadline) {
        if (pick == queues_.size() || queues_[i].jobs.front()->queued() < queues_[pick].jobs.front()->queued()) pick = i;
      } else {
        wake = std::min(wake, deadline);
      }
    }
    if (pick == queues_.size()) {
      if (stopping_ && wake == Clock::time_point::max()) return;  // nothing queued
      if (wake == Clock::time_point::max()) cv_.wait(lock);
      else cv_.wait_until(lock, wake);  // for more requests, or the deadline
      continue;
    }
    Queue& q = queues_[pick];
    // The oldest request, then those behind it while they fit in max_batch units.
    std::vector<std::shared_ptr<Job>> batch;
    int units = 0;
    while (!q.jobs.empty() && (batch.empty() || units + q.jobs.front()->units() <= options_.max_batch)) {
      units += q.jobs.front()->units();
      q.units -= q.jobs.front()->units();
      batch.push_back(std::move(q.jobs.front()));
      q.jobs.pop_front();
    }
    const int64_t left = q.units;
    lock.unlock();
    metrics_.queue(models_[pick].name, left);
    run_batch(pick, batch);
    lock.lock();
  }
}

void Batcher::run_batch(size_t index, std::vector<std::shared_ptr<Job>>& batch) {
  std::vector<std::shared_ptr<Job>> live;
  for (std::shared_ptr<Job>& j : batch)
    if (j->start()) live.push_back(std::move(j));
  if (live.empty()) return;
  const models::LoadedModel& model = *models_[index].model;
  // Answers `jobs` with one run_requests call; an error answers each job alone when there are several,
  // so one bad request does not fail the others.
  auto answer = [&](std::span<const std::shared_ptr<Job>> jobs, auto& self) -> void {
    std::vector<const models::Request*> requests;
    int units = 0;
    for (const auto& j : jobs) requests.push_back(&j->request()), units += j->units();
    try {
      std::vector<json> out = model.run_requests(requests);
      ENGRAM_CHECK(out.size() == jobs.size(), "{}: {} responses for {} requests", models_[index].name, out.size(),
                   jobs.size());
      metrics_.batch(models_[index].name, units);
      for (size_t i = 0; i < jobs.size(); ++i) jobs[i]->finish(200, std::move(out[i]));
    } catch (const std::exception& e) {
      if (jobs.size() > 1) {
        for (size_t i = 0; i < jobs.size(); ++i) self(jobs.subspan(i, 1), self);
        return;
      }
      const bool input = dynamic_cast<const Error*>(&e) != nullptr;  // the request's content
      jobs[0]->finish(input ? 400 : 500, json{{"error", e.what()}});
    }
  };
  answer(std::span<const std::shared_ptr<Job>>(live), answer);
}

}  // namespace engram::serve
