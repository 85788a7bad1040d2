// The connections of `engram serve` (docs/serve.md, "Connections"): cpp-httplib parses requests
// and calls the routes; this layer owns the sockets around it. Every read and write of a
// connection has a real deadline (not httplib's per-recv timeout, which a client sending a byte
// every few seconds never reaches):
//   request line + headers  within header_timeout_ms of the request's start, at most
//                           max_header_bytes (408 / 431)
//   body                    within body_timeout_ms of the end of the headers (408); its bytes as
//                           read off the socket, chunked framing included, at most
//                           kMaxBodyFramingFactor * max_body_bytes + 64 KiB (413; the route counts
//                           the decoded body against max_body_bytes itself)
//   response                written within body_timeout_ms
//   between requests        a kept-alive connection idle for idle_timeout_ms is closed
// http_threads threads serve connections; when every one of them is busy a new connection goes
// to one of kTriageThreads threads that give it triage_timeout_ms to send its request, answer
// GET /health (and /metrics) as usual and everything else 503 at once, then close. After
// begin_drain(deadline) no connection is kept alive, idle ones are closed, and no read or write
// waits past the deadline.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engram/serve/http.h"

namespace engram::serve {

struct ConnectionOptions {
  int http_threads = 128;
  int header_timeout_ms = 20000;
  int body_timeout_ms = 60000;
  int idle_timeout_ms = 5000;
  int triage_timeout_ms = 1000;
  size_t max_header_bytes = 64 << 10;
  size_t max_body_bytes = 1 << 20;
  size_t keep_alive_max_requests = 1000;
};

constexpr int kTriageThreads = 8;
constexpr size_t kMaxBodyFramingFactor = 8;

// What the connection layer knows about the request being read on this thread. The routes and
// the error handler read it through current_request() (same thread, no locking).
struct RequestState {
  enum class Phase { head, body, respond };
  Phase phase = Phase::head;
  bool triage = false;          // served by a triage thread: only /health and /metrics are answered
  bool close = false;           // the connection ends after this response (its input is not in sync)
  bool timed_out = false;       // a deadline passed while reading
  bool head_too_large = false;  // more than max_header_bytes before the body
  bool body_too_large = false;  // more raw body bytes than the framing allowance
  bool from_socket = false;     // false for an in-memory connection (HttpServer::answer)
};

// The deadline and byte counts of the request being read (connection.cc).
struct ConnectionBudget;

// The state of the request this thread is serving, or null outside a connection.
RequestState* current_request();
// Marks the end of the headers (the pre-routing handler calls it): the body deadline starts.
void start_body();

class HttpServer : public httplib::Server {
 public:
  using Clock = std::chrono::steady_clock;
  explicit HttpServer(const ConnectionOptions& options);
  ~HttpServer() override;

  // From now on: no keep-alive, idle connections closed, every read and write ends by `deadline`.
  void begin_drain(Clock::time_point deadline);
  bool draining() const { return drain_ns_.load() != 0; }

  // Answers `bytes`, taken as everything one client sent on one connection (pipelined requests
  // included), without a socket; returns what the server wrote. For tests and fuzz/http_fuzz.cc.
  std::string answer(std::string_view bytes);

  const ConnectionOptions& options() const { return o_; }

 private:
  friend class SocketStream;
  bool process_and_close_socket(socket_t sock) override;
  // Serves requests from `stream` until the connection ends (the keep-alive loop).
  template <class Stream>
  void serve_connection(Stream& stream, RequestState& state, ConnectionBudget& budget);
  // The drain deadline, or time_point::max() before begin_drain.
  Clock::time_point drain_deadline() const;

  ConnectionOptions o_;
  std::atomic<int64_t> drain_ns_{0};  // steady-clock ns of the drain deadline; 0 = not draining
  int wake_fd_ = -1;                  // an eventfd, readable from begin_drain on
};

// The thread pool of the HTTP server (httplib::TaskQueue): `workers` threads for connections and
// kTriageThreads for connections that arrive while every worker is busy.
class ConnectionPool : public httplib::TaskQueue {
 public:
  explicit ConnectionPool(int workers);
  ~ConnectionPool() override;
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;  // serves what was queued, then joins every thread

 private:
  void run(bool triage);
  std::mutex mu_;
  std::condition_variable work_cv_, triage_cv_;
  std::deque<std::function<void()>> work_, triage_;
  int idle_workers_ = 0;
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace engram::serve
