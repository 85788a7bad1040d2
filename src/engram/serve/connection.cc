// Connections of `engram serve`: deadlines, byte budgets, the triage threads, draining
// (connection.h).
#include "engram/serve/connection.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "engram/core/error.h"
#include "engram/serve/request.h"

namespace engram::serve {

using Clock = HttpServer::Clock;

struct ConnectionBudget {
  Clock::time_point deadline;  // of the phase being read
  int body_timeout_ms = 0;
  size_t head_bytes = 0, body_bytes = 0;
};

namespace {

thread_local RequestState* tl_request = nullptr;  // the request this thread reads or answers
thread_local bool tl_triage = false;               // this thread is one of the pool's triage threads

thread_local ConnectionBudget* tl_budget = nullptr;

int ms_until(Clock::time_point t, Clock::time_point now) {
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(t - now).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, 1 << 30));
}

}  // namespace

// Counts what httplib reads against the phase's budget (connection.h). Not in the anonymous
// namespace: SocketStream, HttpServer's friend, derives from it.
class CountingStream : public httplib::Stream {
 public:
  CountingStream(RequestState& state, ConnectionBudget& budget, const ConnectionOptions& o)
      : state_(state), budget_(budget), o_(o) {}

 protected:
  // False (and the state says why) when `n` more bytes pass the budget of the phase.
  bool account(size_t n) {
    if (state_.phase == RequestState::Phase::head) {
      budget_.head_bytes += n;
      if (budget_.head_bytes > o_.max_header_bytes) return !(state_.head_too_large = true);
    } else if (state_.phase == RequestState::Phase::body) {
      budget_.body_bytes += n;
      if (budget_.body_bytes > kMaxBodyFramingFactor * o_.max_body_bytes + (64 << 10))
        return !(state_.body_too_large = true);
    }
    return true;
  }
  RequestState& state_;
  ConnectionBudget& budget_;
  const ConnectionOptions& o_;
};

// A connected socket read through a buffer; every wait ends at the phase's deadline or the drain
// deadline, whichever comes first.
class SocketStream final : public CountingStream {
 public:
  SocketStream(socket_t fd, RequestState& state, ConnectionBudget& budget, const HttpServer& server, int wake_fd)
      : CountingStream(state, budget, server.options()), fd_(fd), server_(server), wake_fd_(wake_fd) {}

  bool is_readable() const override { return pos_ < len_; }
  bool is_writable() const override { return true; }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      const ssize_t n = fill(std::min(budget_.deadline, server_.drain_deadline()));
      if (n <= 0) return n;
    }
    const size_t n = std::min(size, len_ - pos_);
    if (!account(n)) return -1;
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (state_.phase != RequestState::Phase::respond) {
      state_.phase = RequestState::Phase::respond;
      write_deadline_ = Clock::now() + std::chrono::milliseconds(o_.body_timeout_ms);
    }
    size_t off = 0;
    while (off < size) {
      const ssize_t n = ::send(fd_, ptr + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        off += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
      // A response already being written gets half a second past the drain deadline.
      const Clock::time_point drain = server_.drain_deadline();
      const Clock::time_point until =
          std::min(write_deadline_, drain == Clock::time_point::max() ? drain : drain + std::chrono::milliseconds(500));
      const Clock::time_point now = Clock::now();
      if (now >= until) return -1;
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, ms_until(until, now)) < 0 && errno != EINTR) return -1;
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(false, ip, port); }
  socket_t socket() const override { return fd_; }

  // Waits up to idle_timeout_ms for the next request of a kept-alive connection; false when the
  // connection is to be closed (idle too long, draining, an error).
  bool wait_for_request() {
    if (pos_ < len_) return true;  // pipelined: its bytes are here already
    const Clock::time_point until = Clock::now() + std::chrono::milliseconds(o_.idle_timeout_ms);
    for (;;) {
      if (server_.draining()) return false;
      const Clock::time_point now = Clock::now();
      if (now >= until) return false;
      pollfd p[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      const int r = ::poll(p, 2, ms_until(until, now));
      if (r < 0 && errno != EINTR) return false;
      if (r > 0 && p[0].revents) return true;
    }
  }

  // Before closing a connection whose request was not read to its end: sends FIN and reads what
  // the client still sends for up to 1 s or 1 MiB (nginx's lingering close), so the client can
  // read the answer instead of meeting a reset.
  void linger() {
    ::shutdown(fd_, SHUT_WR);
    const Clock::time_point until = std::min(Clock::now() + std::chrono::seconds(1), server_.drain_deadline());
    size_t read = 0;
    while (read < (1u << 20)) {
      const Clock::time_point now = Clock::now();
      if (now >= until) return;
      pollfd p{fd_, POLLIN, 0};
      const int r = ::poll(&p, 1, ms_until(until, now));
      if (r < 0 && errno != EINTR) return;
      if (r <= 0) continue;
      const ssize_t n = ::recv(fd_, buf_, sizeof buf_, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return;
      if (n > 0) read += static_cast<size_t>(n);
    }
  }

 private:
  // Refills the buffer: the bytes read, 0 at the end of the stream, -1 on an error or the deadline.
  ssize_t fill(Clock::time_point deadline) {
    pos_ = len_ = 0;
    for (;;) {
      const Clock::time_point now = Clock::now();
      if (now >= deadline) {
        state_.timed_out = true;
        return -1;
      }
      // Before draining, begin_drain's eventfd wakes this wait so the drain deadline applies.
      const bool draining = server_.draining();
      pollfd p[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      const int r = ::poll(p, draining ? 1 : 2, ms_until(deadline, now));
      if (r < 0 && errno != EINTR) return -1;
      if (!draining && p[1].revents) deadline = std::min(deadline, server_.drain_deadline());
      if (r <= 0 || !p[0].revents) continue;
      const ssize_t n = ::recv(fd_, buf_, sizeof buf_, MSG_DONTWAIT);
      if (n > 0) {
        len_ = static_cast<size_t>(n);
        return n;
      }
      if (n == 0) return 0;
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    }
  }

  void address(bool remote, std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    auto* sa = reinterpret_cast<sockaddr*>(&a);
    ip.clear();
    port = 0;
    if ((remote ? ::getpeername(fd_, sa, &len) : ::getsockname(fd_, sa, &len)) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
      ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
      port = ntohs(in->sin_port);
    } else if (a.ss_family == AF_INET6) {
      const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
      ::inet_ntop(AF_INET6, &in->sin6_addr, text, sizeof text);
      port = ntohs(in->sin6_port);
    }
    ip = text;
  }

  socket_t fd_;
  const HttpServer& server_;
  int wake_fd_;
  Clock::time_point write_deadline_;
  char buf_[16 << 10];
  size_t pos_ = 0, len_ = 0;
};

namespace {

// One connection's bytes in memory (HttpServer::answer): reads end at the end of the input.
class MemoryStream final : public CountingStream {
 public:
  MemoryStream(std::string_view in, RequestState& state, ConnectionBudget& budget, const ConnectionOptions& o)
      : CountingStream(state, budget, o), in_(in) {}
  bool is_readable() const override { return !in_.empty(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    if (in_.empty()) return 0;
    const size_t n = std::min({size, in_.size(), size_t{4096}});
    if (!account(n)) return -1;
    std::memcpy(ptr, in_.data(), n);
    in_.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    state_.phase = RequestState::Phase::respond;
    out_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 0; }
  void get_local_ip_and_port(std::string& ip, int& port) const override { ip = "127.0.0.1", port = 0; }
  socket_t socket() const override { return 0; }
  bool wait_for_request() const { return !in_.empty(); }
  std::string& output() { return out_; }

 private:
  std::string_view in_;
  std::string out_;
};

httplib::Server::HandlerResponse refuse(httplib::Response& res, RequestState* r, int status, const std::string& message) {
  if (r) r->close = true;  // the body, if any, was not read: the input is out of step
  res.status = status;
  res.set_content(nlohmann::json{{"error", message}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json");
  return httplib::Server::HandlerResponse::Handled;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

RequestState* current_request() { return tl_request; }

void start_body() {
  if (!tl_request || !tl_budget) return;
  tl_request->phase = RequestState::Phase::body;
  tl_budget->deadline = Clock::now() + std::chrono::milliseconds(tl_budget->body_timeout_ms);
}

HttpServer::HttpServer(const ConnectionOptions& options) : o_(options) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  // What the Keep-Alive header of each response announces.
  set_keep_alive_timeout((o_.idle_timeout_ms + 999) / 1000);
  set_keep_alive_max_count(o_.keep_alive_max_requests);
  ENGRAM_CHECK(wake_fd_ >= 0, "serve: cannot create an eventfd: {}", std::strerror(errno));
  // After the headers, before the body: the framing checks httplib does not make, then the body's
  // deadline starts. A refusal here closes the connection after its answer.
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    RequestState* r = current_request();
    start_body();
    // Range headers are ignored: every answer is its whole body (RFC 9110 lets a server ignore
    // Range), never a slice of a JSON reply. httplib would cut any response, errors included, to
    // the ranges it parsed; the request is httplib's own non-const local, seen here through const.
    const_cast<httplib::Request&>(req).ranges.clear();
    const size_t lengths = req.get_header_value_count("Content-Length");
    const size_t encodings = req.get_header_value_count("Transfer-Encoding");
    std::string length = lengths ? req.get_header_value("Content-Length") : "";
    for (size_t i = 1; i < lengths; ++i)
      if (req.get_header_value("Content-Length", i) != length)
        return refuse(res, r, 400,
                      fmt::format("two different Content-Length headers ({} and {})", printable(length, 24),
                                  printable(req.get_header_value("Content-Length", i), 24)));
    if (lengths && !all_digits(length))
      return refuse(res, r, 400, fmt::format("Content-Length '{}' is not a number of bytes", printable(length, 24)));
    if (encodings > 1 || (encodings && req.get_header_value("Transfer-Encoding") != "chunked"))
      return refuse(res, r, 400,
                    fmt::format("Transfer-Encoding '{}' is not supported (only one 'chunked')",
                                printable(req.get_header_value("Transfer-Encoding"), 40)));
    if (lengths && encodings) return refuse(res, r, 400, "both Content-Length and Transfer-Encoding");
    const bool post = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" ||
                      req.method == "DELETE" || req.method == "PRI";
    const bool body = encodings || (lengths && std::stoull(length) > 0);
    if (r && r->triage && !(req.method == "GET" && (req.path == "/health" || req.path == "/metrics"))) {
      res.set_header("Retry-After", "1");
      return refuse(res, r, 503,
                    fmt::format("all {} HTTP threads are busy (http_threads): try again later", o_.http_threads));
    }
    if (!post) {
      if (body && r) r->close = true;  // httplib reads no body here: what follows is not a request
      return httplib::Server::HandlerResponse::Unhandled;
    }
    if (!lengths && !encodings && req.method != "DELETE")
      return refuse(res, r, 411, "a request body needs Content-Length or Transfer-Encoding: chunked");
    if (lengths && std::stoull(length) > o_.max_body_bytes)
      return refuse(res, r, 413,
                    fmt::format("the request body ({} bytes) is larger than max_body_bytes {}", length, o_.max_body_bytes));
    if (req.is_multipart_form_data()) return refuse(res, r, 415, "multipart bodies are not accepted: send JSON");
    return httplib::Server::HandlerResponse::Unhandled;
  });
}

HttpServer::~HttpServer() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void HttpServer::begin_drain(Clock::time_point deadline) {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  int64_t expected = 0;
  drain_ns_.compare_exchange_strong(expected, std::max<int64_t>(ns, 1));
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

Clock::time_point HttpServer::drain_deadline() const {
  const int64_t ns = drain_ns_.load();
  return ns == 0 ? Clock::time_point::max() : Clock::time_point(std::chrono::nanoseconds(ns));
}

template <class Stream>
void HttpServer::serve_connection(Stream& stream, RequestState& state, ConnectionBudget& budget) {
  tl_request = &state;
  tl_budget = &budget;
  for (size_t count = 0;; ++count) {
    if (count > 0 && !stream.wait_for_request()) break;
    const bool triage = state.triage, from_socket = state.from_socket;
    state = RequestState{};
    state.triage = triage;
    state.from_socket = from_socket;
    const int head_ms = triage ? o_.triage_timeout_ms : o_.header_timeout_ms;
    budget = ConnectionBudget{Clock::now() + std::chrono::milliseconds(head_ms), triage ? o_.triage_timeout_ms : o_.body_timeout_ms};
    const bool last = draining() || triage || count + 1 >= o_.keep_alive_max_requests;
    bool closed = false;
    const bool ok = process_request(stream, last, closed, nullptr);
    if (!ok || closed || last || state.close || state.timed_out || state.head_too_large || state.body_too_large) break;
  }
  tl_request = nullptr;
  tl_budget = nullptr;
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  RequestState state;
  state.triage = tl_triage;
  state.from_socket = true;
  ConnectionBudget budget;
  SocketStream stream(sock, state, budget, *this, wake_fd_);
  serve_connection(stream, state, budget);
  if (state.close || state.body_too_large || state.head_too_large) stream.linger();
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return true;
}

std::string HttpServer::answer(std::string_view bytes) {
  RequestState state;
  ConnectionBudget budget;
  MemoryStream stream(bytes, state, budget, o_);
  serve_connection(stream, state, budget);
  return std::move(stream.output());
}

ConnectionPool::ConnectionPool(int workers) : idle_workers_(workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { run(false); });
  for (int i = 0; i < kTriageThreads; ++i) threads_.emplace_back([this] { run(true); });
}

ConnectionPool::~ConnectionPool() { shutdown(); }

void ConnectionPool::enqueue(std::function<void()> fn) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (idle_workers_ > static_cast<int>(work_.size())) {
      work_.push_back(std::move(fn));
      work_cv_.notify_one();
      return;
    }
    triage_.push_back(std::move(fn));
  }
  triage_cv_.notify_one();
}

void ConnectionPool::shutdown() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    shutdown_ = true;
  }
  work_cv_.notify_all();
  triage_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

void ConnectionPool::run(bool triage) {
  tl_triage = triage;
  std::deque<std::function<void()>>& queue = triage ? triage_ : work_;
  std::condition_variable& cv = triage ? triage_cv_ : work_cv_;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv.wait(lock, [&] { return shutdown_ || !queue.empty(); });
    if (queue.empty()) return;  // shut down with nothing left
    std::function<void()> fn = std::move(queue.front());
    queue.pop_front();
    if (!triage) --idle_workers_;
    lock.unlock();
    try {
      fn();
    } catch (...) {  // a connection's failure ends that connection, not the thread
    }
    lock.lock();
    if (!triage) ++idle_workers_;
  }
}

}  // namespace engram::serve
