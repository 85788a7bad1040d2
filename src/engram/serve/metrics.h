// The server's counters in Prometheus' text format (GET /metrics): requests by route and status,
// request latency and batch size histograms, the units waiting per model. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace engram::serve {

// A cumulative histogram with fixed upper bounds (Prometheus "le" buckets, +Inf implied).
struct Histogram {
  std::vector<double> bounds;    // ascending
  std::vector<uint64_t> counts;  // [bounds + 1], the last one is +Inf (not cumulative here)
  double sum = 0;
  uint64_t count = 0;
  explicit Histogram(std::vector<double> b) : bounds(std::move(b)), counts(bounds.size() + 1, 0) {}
  void observe(double v);
};

class Metrics {
 public:
  Metrics();
  void request(const std::string& route, int status, double seconds);
  void batch(const std::string& model, int units);  // one batch decoded
  void queue(const std::string& model, int64_t units);  // the units now waiting for `model`
  void in_flight(int64_t requests);                     // POST requests now inside their handlers
  std::string text() const;                             // the exposition text

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) -> count
  uint64_t errors_ = 0;                                       // status >= 400
  Histogram latency_;                                         // seconds
  std::map<std::string, Histogram> batch_units_;              // per model
  std::map<std::string, int64_t> queue_;                      // per model
  int64_t in_flight_ = 0;
};

}  // namespace engram::serve
