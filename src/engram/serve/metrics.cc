// Prometheus text exposition of the server's counters (metrics.h).
#include "engram/serve/metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace engram::serve {

namespace {

const std::vector<double> kLatencyBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
const std::vector<double> kBatchBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};

// A label value with \, " and newline escaped (the format's rule).
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void write_histogram(std::string& out, const char* name, const std::string& labels, const Histogram& h) {
  uint64_t cumulative = 0;
  const std::string sep = labels.empty() ? "" : labels + ",";
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    out += fmt::format("{}_bucket{{{}le=\"{}\"}} {}\n", name, sep, h.bounds[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{}le=\"+Inf\"}} {}\n", name, sep, h.count);
  const std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, braces, h.sum, name, braces, h.count);
}

}  // namespace

void Histogram::observe(double v) {
  const size_t i = static_cast<size_t>(std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin());
  ++counts[i];
  sum += v;
  ++count;
}

Metrics::Metrics() : latency_(kLatencyBounds) {}

void Metrics::request(const std::string& route, int status, double seconds) {
  const std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, status}];
  if (status >= 400) ++errors_;
  latency_.observe(seconds);
}

void Metrics::batch(const std::string& model, int units) {
  const std::lock_guard<std::mutex> lock(mu_);
  batch_units_.try_emplace(model, kBatchBounds).first->second.observe(units);
}

void Metrics::queue(const std::string& model, int64_t units) {
  const std::lock_guard<std::mutex> lock(mu_);
  queue_[model] = units;
}

void Metrics::in_flight(int64_t requests) {
  const std::lock_guard<std::mutex> lock(mu_);
  in_flight_ = requests;
}

std::string Metrics::text() const {
  const std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out += "# HELP engram_requests_total HTTP requests answered, by route and status.\n";
  out += "# TYPE engram_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += fmt::format("engram_requests_total{{route=\"{}\",status=\"{}\"}} {}\n", label(key.first), key.second, n);
  out += "# HELP engram_request_errors_total HTTP requests answered with a status of 400 or more.\n";
  out += "# TYPE engram_request_errors_total counter\n";
  out += fmt::format("engram_request_errors_total {}\n", errors_);
  out += "# HELP engram_request_seconds Time from a request's arrival to its answer.\n";
  out += "# TYPE engram_request_seconds histogram\n";
  write_histogram(out, "engram_request_seconds", "", latency_);
  out += "# HELP engram_batch_units Units (seq2seq: sentences) decoded together in one batch, by model.\n";
  out += "# TYPE engram_batch_units histogram\n";
  for (const auto& [model, h] : batch_units_)
    write_histogram(out, "engram_batch_units", fmt::format("model=\"{}\"", label(model)), h);
  out += "# HELP engram_queue_units Units waiting to be decoded, by model.\n";
  out += "# TYPE engram_queue_units gauge\n";
  for (const auto& [model, n] : queue_) out += fmt::format("engram_queue_units{{model=\"{}\"}} {}\n", label(model), n);
  out += "# HELP engram_requests_in_flight POST requests inside their handlers: being read, queued or decoded.\n";
  out += "# TYPE engram_requests_in_flight gauge\n";
  out += fmt::format("engram_requests_in_flight {}\n", in_flight_);
  return out;
}

}  // namespace engram::serve
