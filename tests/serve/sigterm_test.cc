// `engram serve`'s own shutdown path (serve_until_signal) in this process, driven hard enough for
// ThreadSanitizer to see its interleavings (make tsan, docs/limits.md): many clients at once over
// two families, batching on, several workers each with a team of two threads, then a real SIGTERM
// while their requests wait for their batches. Every answer is its own request's; nothing fails
// before the signal; after it a request is answered, refused with 503 "shutting down", or finds
// no server — never a 5xx or a wrong answer; requests in flight at the signal are answered;
// serve_until_signal returns and puts the previous SIGTERM disposition back.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <future>
#include <mutex>
#include <random>

#include "serve/serve_util.h"

namespace engram::serve {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

// One request: "babi" (story + question) or "translate" (1-3 sentences); its expected answers.
struct Request {
  std::string route;
  json body;
  std::vector<std::string> expected;
};

Request make_request(std::mt19937& rng, bool babi) {
  static const auto seq2seq = golden_cases("seq2seq");
  static const auto memn2n = golden_cases("memn2n");
  if (babi) {
    const auto& [in, expected] = memn2n[rng() % memn2n.size()];
    const size_t q = in.rfind('.') + 1;
    return {"/v1/babi", json{{"story", in.substr(0, q)}, {"question", in.substr(q)}}, {expected}};
  }
  Request r{"/v1/translate", json{{"src", json::array()}}, {}};
  for (size_t n = 1 + rng() % 3; n > 0; --n) {
    const auto& [in, expected] = seq2seq[rng() % seq2seq.size()];
    r.body["src"].push_back(in);
    r.expected.push_back(expected);
  }
  return r;
}

// True when `body` answers `r` with its expected outputs.
bool answers(const Request& r, const json& body) {
  if (r.route == "/v1/babi") return body.is_object() && body.value("answer", "") == r.expected[0];
  if (!body.is_object() || !body.contains("translations") || body["translations"].size() != r.expected.size()) return false;
  for (size_t i = 0; i < r.expected.size(); ++i)
    if (body["translations"][i].empty() || body["translations"][i][0].value("tgt", "") != r.expected[i]) return false;
  return true;
}

TEST(ServeSignal, SigtermWithManyClientsInFlightAnswersWhatWasReceived) {
  ServeOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.workers = 3;
  o.threads = 2;  // each worker's own thread team (decoding splits a beam's rows over it)
  o.max_batch = 8;
  o.max_wait_ms = 150;  // requests wait for their batch: many are in flight when the signal comes
  o.http_threads = 64;
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &before), 0);

  std::promise<int> listening;
  std::exception_ptr server_error;
  std::thread server([&] {
    try {
      serve_until_signal(RunningServer::golden_specs({"seq2seq", "memn2n"}), o,
                         [&](int port) { listening.set_value(port); });
    } catch (...) {
      server_error = std::current_exception();
      try {
        listening.set_value(-1);
      } catch (const std::future_error&) {  // it was listening already
      }
    }
  });
  const int port = listening.get_future().get();
  ASSERT_GT(port, 0);  // else serve_until_signal failed before listening (server_error)

  constexpr int kClients = 24;
  std::atomic<bool> signalled{false};
  std::atomic<int> answered{0}, wrong{0}, early_failures{0}, bad_after{0}, in_flight_answered{0}, ended{0};
  std::mutex mu;
  std::vector<std::string> notes;  // what went wrong, for the failure message
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k)
    clients.emplace_back([&, k] {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(60, 0);
      c.set_connection_timeout(5, 0);
      std::mt19937 rng(77 + k);  // fixed: each client its own mix of requests
      const Clock::time_point give_up = Clock::now() + std::chrono::seconds(120);
      while (Clock::now() < give_up) {
        const Request r = make_request(rng, k % 4 == 3);  // a quarter of the clients ask bAbI
        const bool signalled_at_send = signalled.load();
        auto [status, body] = post(c, r.route, r.body);
        const bool after = signalled.load();
        if (status == 200) {
          ++answered;
          if (!answers(r, body)) {
            ++wrong;
            const std::lock_guard<std::mutex> lock(mu);
            notes.push_back(r.body.dump() + " -> " + body.dump());
          }
          if (!signalled_at_send && after) ++in_flight_answered;
          continue;
        }
        if (!after) {
          ++early_failures;
        } else if (!(status == -1 || (status == 503 && body.value("error", "").find("shutting down") != std::string::npos))) {
          ++bad_after;
        } else {
          ++ended;  // the server stopped serving this client
          return;
        }
        const std::lock_guard<std::mutex> lock(mu);
        notes.push_back(r.body.dump() + " -> " + std::to_string(status) + " " + body.dump());
        return;
      }
    });

  // SIGTERM once every client has had answers on average (the clients keep sending meanwhile).
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(60);
  while (answered.load() < 3 * kClients && early_failures.load() == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const int answered_before = answered.load();
  signalled = true;
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  server.join();
  for (std::thread& t : clients) t.join();

  if (server_error) std::rethrow_exception(server_error);
  std::string all_notes;
  for (const std::string& n : notes) all_notes += n + "\n";
  EXPECT_GE(answered_before, 3 * kClients) << "the clients were not all answered within 60 s";
  EXPECT_EQ(early_failures.load(), 0) << all_notes;
  EXPECT_EQ(wrong.load(), 0) << "an answer that is not its own request's\n" << all_notes;
  EXPECT_EQ(bad_after.load(), 0) << "after SIGTERM: neither answered, nor 503 shutting down, nor refused\n" << all_notes;
  EXPECT_EQ(ended.load(), kClients) << "every client sees the server stop";
  EXPECT_GT(in_flight_answered.load(), 0) << "no request sent before SIGTERM was answered after it";
  struct sigaction now {};
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, before.sa_handler) << "the previous SIGTERM disposition is back";
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  EXPECT_FALSE(c.Get("/health")) << "a stopped server accepts no connection";
}

// Right after SIGTERM /health answers 503 "stopping" (a load balancer takes the server out) while a
// request in flight keeps the server draining; new requests get 503; the drain ends at
// --drain-timeout-ms even though that request's client never finishes its body.
TEST(ServeSignal, HealthIs503StoppingRightAfterSigtermAndTheDrainIsBounded) {
  ServeOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.drain_timeout_ms = 1500;
  std::promise<int> listening;
  std::exception_ptr server_error;
  std::thread server([&] {
    try {
      serve_until_signal(RunningServer::golden_specs({"pointer"}), o, [&](int port) { listening.set_value(port); });
    } catch (...) {
      server_error = std::current_exception();
      try {
        listening.set_value(-1);
      } catch (const std::future_error&) {
      }
    }
  });
  const int port = listening.get_future().get();
  ASSERT_GT(port, 0);
  // A request in a handler: its headers are in, its body never ends.
  RawConnection slow(port);
  ASSERT_TRUE(slow.send("POST /v1/pointer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"));
  // The server must have taken the request into its handler before the signal, or nothing is in
  // flight and the drain ends at once (no /health to answer): /metrics counts it.
  {
    httplib::Client m("127.0.0.1", port);
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(60);
    bool in = false;
    while (!in && Clock::now() < give_up) {
      const auto r = m.Get("/metrics");
      in = r && r->body.find("\nengram_requests_in_flight 1\n") != std::string::npos;
      if (!in) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!in) {  // stop the server before failing (a joinable thread must not be destroyed)
      ::kill(::getpid(), SIGTERM);
      server.join();
      FAIL() << "the request was not in its handler within 60 s";
    }
  }
  const Clock::time_point signalled = Clock::now();
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2, 0);
  c.set_read_timeout(2, 0);
  const auto health = c.Get("/health");
  EXPECT_TRUE(health) << "/health did not answer right after SIGTERM";
  if (health) {
    EXPECT_EQ(health->status, 503);
    EXPECT_EQ(json::parse(health->body, nullptr, false).value("status", ""), "stopping") << health->body;
  }
  auto [status, body] = post(c, "/v1/pointer", json{{"points", {0.5, 0.1}}});
  EXPECT_TRUE(status == 503 || status == -1) << status << body.dump();
  server.join();
  const double took = std::chrono::duration<double>(Clock::now() - signalled).count();
  if (server_error) std::rethrow_exception(server_error);
  EXPECT_LT(took, 1.5 + 2.0) << "the drain outlasted drain_timeout_ms 1500 (plus 2 s)";
  const std::string cut = slow.read_response(std::chrono::milliseconds(2000));
  EXPECT_TRUE(cut.empty() || status_of(cut) == 408 || status_of(cut) == 503) << cut;
}

}  // namespace
}  // namespace engram::serve
