// The server under load and faults: concurrent clients get their own answers while their
// requests are batched together; overload is a 503 and a timeout a 504, never a hang; clients
// that vanish mid-request and 1,000 random or broken bodies leave it serving; SIGTERM-style stop()
// answers the requests in flight.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <future>
#include <map>
#include <random>
#include <regex>

#include "serve/serve_util.h"

namespace engram::serve {
namespace {

using namespace testing;

// Sum of the engram_batch_units histogram's count and its le="1" bucket for `model`.
std::pair<long, long> batch_counts(httplib::Client& c, const std::string& model) {
  const auto r = c.Get("/metrics");
  if (!r) return {-1, -1};
  std::smatch m;
  long total = -1, ones = -1;
  const std::string& t = r->body;
  if (std::regex_search(t, m, std::regex("engram_batch_units_count\\{model=\"" + model + "\"\\} (\\d+)")))
    total = std::stol(m[1]);
  if (std::regex_search(t, m, std::regex("engram_batch_units_bucket\\{model=\"" + model + "\",le=\"1\"\\} (\\d+)")))
    ones = std::stol(m[1]);
  return {total, ones};
}

TEST(ServeLoad, ConcurrentClientsGetTheirOwnAnswersInSharedBatches) {
  ServeOptions o;
  o.max_batch = 16;
  o.max_wait_ms = 20;
  o.workers = 2;
  RunningServer s({"seq2seq", "memn2n"}, o);
  const auto cases = golden_cases("seq2seq");
  const auto babi = golden_cases("memn2n");
  constexpr int kClients = 8, kRequests = 12;
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k) {
    clients.emplace_back([&, k] {
      httplib::Client c = s.client();
      std::mt19937 rng(1000 + k);  // fixed: each client its own mix of cases
      for (int r = 0; r < kRequests; ++r) {
        if (k == kClients - 1) {  // one client asks the other family meanwhile
          const auto& [in, expected] = babi[rng() % babi.size()];
          const size_t q = in.rfind('.') + 1;
          auto [status, body] = post(c, "/v1/babi", json{{"story", in.substr(0, q)}, {"question", in.substr(q)}});
          if (status != 200) ++failed;
          else if (body["answer"] != expected) ++wrong;
          continue;
        }
        std::vector<size_t> pick(1 + rng() % 3);
        json src = json::array();
        for (size_t& i : pick) i = rng() % cases.size(), src.push_back(cases[i].first);
        auto [status, body] = post(c, "/v1/translate", json{{"src", src}});
        if (status != 200 || body["translations"].size() != pick.size()) {
          ++failed;
          continue;
        }
        for (size_t i = 0; i < pick.size(); ++i)
          if (body["translations"][i][0]["tgt"] != cases[pick[i]].second) ++wrong;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0) << "an answer that is not its own request's";
  httplib::Client c = s.client();
  const auto [total, ones] = batch_counts(c, "seq2seq");
  ASSERT_GT(total, 0);
  EXPECT_LT(ones, total) << "no batch held more than one sentence: the requests were not batched";
}

TEST(ServeLoad, OverloadIs503NotAHang) {
  ServeOptions o;
  o.workers = 1;
  o.max_batch = 64;
  o.max_wait_ms = 800;  // the first batch waits: the queue fills meanwhile
  o.max_queue = 2;
  RunningServer s({"seq2seq"}, o);
  constexpr int kClients = 10;
  std::vector<int> status(kClients, 0);
  std::vector<std::string> error(kClients);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k)
    clients.emplace_back([&, k] {
      httplib::Client c = s.client();
      auto [st, body] = post(c, "/v1/translate", json{{"src", "29 November 2026"}});
      status[k] = st;
      if (st != 200 && body.is_object()) error[k] = body.value("error", "");
    });
  for (std::thread& t : clients) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int ok = 0, busy = 0;
  for (int k = 0; k < kClients; ++k) {
    ok += status[k] == 200, busy += status[k] == 503;
    if (status[k] == 503) {
      EXPECT_NE(error[k].find("max_queue 2"), std::string::npos) << error[k];
    }
  }
  EXPECT_EQ(ok + busy, kClients) << "every request is answered, 200 or 503";
  EXPECT_GE(ok, 1);
  EXPECT_LE(ok, 2) << "max_queue 2 units: at most two requests wait for the first batch";
  EXPECT_GE(busy, kClients - 2);
  EXPECT_LT(seconds, 20.0);
}

TEST(ServeLoad, TimeoutIs504AndTheServerGoesOn) {
  ServeOptions o;
  o.max_wait_ms = 1500;
  o.max_batch = 64;
  o.request_timeout_ms = 100;
  RunningServer s({"seq2seq"}, o);
  httplib::Client c = s.client();
  auto [status, body] = post(c, "/v1/translate", json{{"src", "29 November 2026"}});
  EXPECT_EQ(status, 504) << body.dump();
  EXPECT_NE(body.value("error", "").find("request_timeout_ms 100"), std::string::npos) << body.dump();
  auto r = c.Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// A raw connection to the server that sends `bytes` and closes without reading the answer.
void send_and_vanish(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

TEST(ServeLoad, ClientsThatDisconnectMidRequestDoNotBreakIt) {
  ServeOptions o;
  o.max_wait_ms = 200;
  RunningServer s({"seq2seq"}, o);
  const std::string body = json{{"src", {"29 November 2026", "Nov 29, 2026"}}}.dump();
  const std::string head = "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ";
  for (int i = 0; i < 5; ++i) {
    send_and_vanish(s.port(), head + std::to_string(body.size()) + "\r\n\r\n" + body);  // whole, then gone
    send_and_vanish(s.port(), head + std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 9));  // half a body
    send_and_vanish(s.port(), "POST /v1/transl");  // half a request line
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the abandoned batch is decoded meanwhile
  httplib::Client c = s.client();
  auto [status, reply] = post(c, "/v1/translate", json{{"src", golden_cases("seq2seq")[0].first}});
  ASSERT_EQ(status, 200);
  EXPECT_EQ(reply["translations"][0][0]["tgt"], golden_cases("seq2seq")[0].second);
}

// 1,000 bodies from a fixed seed: random bytes, valid requests cut short or with one character
// changed, and JSON of random shapes, sent to random routes. Each gets a JSON error (4xx) or an
// answer (200), never a 5xx or no answer; afterwards the server still translates correctly.
TEST(ServeLoad, RandomAndBrokenBodiesLeaveItServing) {
  ServeOptions o;
  o.max_wait_ms = 0;
  o.max_body_bytes = 2048;
  RunningServer s({"seq2seq", "memn2n", "ntm", "pointer", "tree"}, o);
  httplib::Client c = s.client();
  std::mt19937 rng(20261201);
  const std::vector<std::string> routes = {"/v1/translate", "/v1/babi", "/v1/ntm", "/v1/pointer", "/v1/sentiment",
                                           "/translator/translate", "/v1/transcribe"};
  const std::vector<std::string> valid = {
      R"j({"src": ["29 November 2026"], "beam": 2, "n_best": 2, "alignments": true})j",
      R"j({"story": ["Mary moved to the bathroom."], "question": "Where is Mary?"})j",
      R"j({"length": 3, "repeat": 1, "seed": 5})j",
      R"j({"points": [0.5, 0.1, 0.9]})j",
      R"j({"text": "(3 (2 It) (4 (4 rocks)))"})j",
      R"j([{"src": "Nov 29, 2026", "id": 0}])j",
      R"j({"wav_base64": "UklGRg=="})j"};
  auto random_json = [&](auto& self, int depth) -> json {
    switch (rng() % (depth > 2 ? 4 : 6)) {
      case 0: return static_cast<int64_t>(rng()) - (1ll << 31);
      case 1: return std::uniform_real_distribution<double>(-1e9, 1e9)(rng);
      case 2: return std::string(rng() % 40, static_cast<char>('a' + rng() % 26));
      case 3: return nullptr;
      case 4: {
        json a = json::array();
        for (int i = rng() % 5; i > 0; --i) a.push_back(self(self, depth + 1));
        return a;
      }
      default: {
        const char* keys[] = {"src", "beam", "n_best", "alpha", "model", "story", "question", "length", "points",
                              "text", "repeat", "seed", "wav_base64", "alignments", "id"};
        json obj = json::object();
        for (int i = rng() % 5; i > 0; --i) obj[keys[rng() % 15]] = self(self, depth + 1);
        return obj;
      }
    }
  };
  std::map<int, int> seen;
  for (int i = 0; i < 1000; ++i) {
    const size_t r = rng() % routes.size();
    std::string body;
    switch (i % 4) {
      case 0:
        body.resize(rng() % 300);
        for (char& ch : body) ch = static_cast<char>(rng() % 256);
        break;
      case 1: body = valid[r].substr(0, rng() % valid[r].size()); break;
      case 2:
        body = valid[r];
        body[rng() % body.size()] = static_cast<char>(32 + rng() % 95);
        break;
      default: body = random_json(random_json, 0).dump(); break;
    }
    auto [status, reply] = post(c, routes[r], body);
    ++seen[status];
    ASSERT_TRUE(status == 200 || (status >= 400 && status < 500)) << routes[r] << " " << body << " -> " << status;
    if (status != 200) {
      ASSERT_TRUE(reply.is_object() && reply.contains("error")) << reply.dump();
    }
  }
  EXPECT_GT(seen[400], 500);
  auto [status, reply] = post(c, "/v1/translate", json{{"src", golden_cases("seq2seq")[3].first}});
  ASSERT_EQ(status, 200);
  EXPECT_EQ(reply["translations"][0][0]["tgt"], golden_cases("seq2seq")[3].second);
}

TEST(ServeLoad, StopAnswersTheRequestsInFlight) {
  ServeOptions o;
  o.max_wait_ms = 1500;  // the requests are still waiting for their batch when stop() comes
  o.max_batch = 64;
  auto s = std::make_unique<RunningServer>(std::vector<std::string>{"seq2seq"}, o);
  const auto cases = golden_cases("seq2seq");
  constexpr int kClients = 4;
  std::vector<std::pair<int, json>> got(kClients);
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k)
    clients.emplace_back([&, k] {
      httplib::Client c = s->client();
      got[k] = post(c, "/v1/translate", json{{"src", cases[k].first}});
    });
  // Until the server has queued all four (its queue gauge), at most 10 s.
  const int port = s->port();
  {
    httplib::Client probe = s->client();
    const std::regex queued("engram_queue_units\\{model=\"seq2seq\"\\} 4\n");
    for (int i = 0; i < 200; ++i) {
      const auto r = probe.Get("/metrics");
      if (r && std::regex_search(r->body, queued)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  s->stop();  // returns once the requests received are answered
  for (std::thread& t : clients) t.join();
  for (int k = 0; k < kClients; ++k) {
    ASSERT_EQ(got[k].first, 200) << k;
    EXPECT_EQ(got[k].second["translations"][0][0]["tgt"], cases[k].second);
  }
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  EXPECT_FALSE(c.Get("/health")) << "a stopped server accepts no connection";
}

}  // namespace
}  // namespace engram::serve

namespace engram::serve {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

// serve_until_signal on a free port in a thread; the port once it listens (-1: it failed).
struct SignalledServer {
  std::promise<int> listening;
  std::thread thread;
  std::exception_ptr error;
  std::atomic<bool> returned{false};
  int port = -1;
  SignalledServer(const std::vector<std::string>& families, ServeOptions o) {
    o.host = "127.0.0.1";
    o.port = 0;
    thread = std::thread([this, families, o] {
      try {
        serve_until_signal(RunningServer::golden_specs(families), o, [&](int p) { listening.set_value(p); });
      } catch (...) {
        error = std::current_exception();
        try {
          listening.set_value(-1);
        } catch (const std::future_error&) {
        }
      }
      returned = true;
    });
    port = listening.get_future().get();
  }
  ~SignalledServer() {
    if (thread.joinable()) {
      ::kill(::getpid(), SIGTERM);
      thread.join();
    }
  }
};

// The load test of docs/serve.md ("Connections"): twice as many clients as --http-threads send
// their headers a byte every 300 ms (reconnecting when cut off). Meanwhile /health answers and a
// normal client gets its answer or a 503 within 1 s, every time; SIGTERM under that load ends
// serve_until_signal within --drain-timeout-ms (plus a margin for a noisy machine).
TEST(ServeLoad, SlowClientsBeyondHttpThreadsLeaveHealthAndAnswersWithinOneSecond) {
  ServeOptions o;
  o.http_threads = 2;
  o.drain_timeout_ms = 1000;  // the header timeout stays at its default: the slow clients hold on
  SignalledServer server({"pointer"}, o);
  ASSERT_GT(server.port, 0);
  constexpr int kSlow = 6;
  std::atomic<bool> done{false};
  std::atomic<int> slow_connections{0};
  std::vector<std::thread> slow;
  for (int k = 0; k < kSlow; ++k)
    slow.emplace_back([&] {
      while (!done) {
        RawConnection conn(server.port);
        if (!conn.connected()) return;  // the server is gone
        ++slow_connections;
        bool open = conn.send("POST /v1/pointer HTTP/1.1\r\n");
        while (open && !done) {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          open = conn.send("X");
        }
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // every HTTP thread is taken
  double worst_health = 0, worst_post = 0;
  int health_ok = 0, answered = 0, refused = 0, bad = 0;
  for (int round = 0; round < 10; ++round) {
    httplib::Client c("127.0.0.1", server.port);
    c.set_connection_timeout(2, 0);
    c.set_read_timeout(2, 0);
    Clock::time_point t = Clock::now();
    const auto h = c.Get("/health");
    worst_health = std::max(worst_health, std::chrono::duration<double>(Clock::now() - t).count());
    if (h && h->status == 200) ++health_ok;
    t = Clock::now();
    auto [status, body] = post(c, "/v1/pointer", json{{"points", {0.5, 0.1, 0.9, 0.3}}});
    worst_post = std::max(worst_post, std::chrono::duration<double>(Clock::now() - t).count());
    if (status == 200) ++answered;
    else if (status == 503) ++refused;
    else ++bad;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(health_ok, 10) << "/health did not answer while slow clients held the HTTP threads";
  EXPECT_LT(worst_health, 1.0);
  EXPECT_EQ(bad, 0) << "a normal request got neither an answer nor a 503";
  EXPECT_LT(worst_post, 1.0);
  const Clock::time_point signalled = Clock::now();
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  server.thread.join();
  const double drain = std::chrono::duration<double>(Clock::now() - signalled).count();
  done = true;
  for (std::thread& t : slow) t.join();
  if (server.error) std::rethrow_exception(server.error);
  EXPECT_LT(drain, 1.0 + 2.0) << "SIGTERM under load took longer than drain_timeout_ms 1000 plus 2 s";
  std::printf("load: %d slow clients (%d connections), http_threads 2: /health 10/10 worst %.3f s; "
              "pointer %d answered, %d 503, worst %.3f s; SIGTERM to return %.3f s (drain 1 s)\n",
              kSlow, slow_connections.load(), worst_health, answered, refused, worst_post, drain);
}

}  // namespace
}  // namespace engram::serve
