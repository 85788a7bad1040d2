// Load benchmark of `engram serve` on loopback (bench/results_serve.md): a Server started in
// this process on a free port and C client threads, each with its own keep-alive connection,
// sending one-input requests to the model's route until the run's request count or time limit.
// Per run: inputs/s, p50 / p99 latency, the mean batch size (from /metrics) and the errors (any
// status but 200, or no answer). The runs: each --clients count with dynamic batching, then the
// largest count again with --max-batch 1 (no batching), and the throughput ratio of the two.
//   serve_load [-m DIR] [--clients 1,8,64] [--requests 2000] [--seconds 30] [--max-batch 32]
//              [--max-wait-ms 5] [--workers 2] [--inputs FILE | --bodies FILE]
// DIR (any family; its route is the family's) defaults to the golden seq2seq model
// (tests/golden/models/seq2seq, a dates model). Requests: --bodies FILE, one JSON request body
// per line, in turn; else {"src": [s]} for each sentence s, the first column of --inputs FILE
// (default that model's cases.tsv).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/models/registry.h"
#include "engram/serve/http.h"
#include "engram/serve/server.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Run {
  int clients = 1;
  int max_batch = 32;
  double seconds = 0;
  int64_t sentences = 0, errors = 0;
  double p50_ms = 0, p99_ms = 0, mean_batch = 0;
};

double metric(const std::string& text, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(name + "\\{model=\"[^\"]*\"\\} ([0-9.e+]+)"))) return 0;
  return std::stod(m[1]);
}

Run run_once(const std::string& model, const std::string& route, const std::vector<std::string>& bodies, int clients,
             int64_t requests, double max_seconds, engram::serve::ServeOptions o) {
  o.host = "127.0.0.1";
  o.port = 0;
  engram::serve::Server server(engram::serve::load_models({"bench=" + model}), o);
  const int port = server.bind();
  std::thread runner([&] { server.run(); });
  std::atomic<int64_t> next{0}, errors{0};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(clients));
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_at =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(max_seconds));
  std::vector<std::thread> threads;
  for (int k = 0; k < clients; ++k)
    threads.emplace_back([&, k] {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(60, 0);
      for (int64_t i; (i = next.fetch_add(1)) < requests && Clock::now() < stop_at;) {
        const std::string& body = bodies[static_cast<size_t>(i) % bodies.size()];
        const Clock::time_point t0 = Clock::now();
        const httplib::Result r = c.Post(route, body, "application/json");
        latencies[static_cast<size_t>(k)].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (!r || r->status != 200) {
          // The first few errors are printed: what failed matters more than the count.
          if (errors.fetch_add(1) < 3)
            std::fprintf(stderr, "serve_load: request %lld: %s\n", static_cast<long long>(i),
                         r ? (std::to_string(r->status) + " " + r->body.substr(0, 200)).c_str()
                           : httplib::to_string(r.error()).c_str());
        }
      }
    });
  for (std::thread& t : threads) t.join();
  Run run;
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  httplib::Client c("127.0.0.1", port);
  const httplib::Result m = c.Get("/metrics");
  server.stop();
  runner.join();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  run.clients = clients;
  run.max_batch = o.max_batch;
  run.errors = errors;
  run.sentences = static_cast<int64_t>(all.size()) - run.errors;
  if (!all.empty()) {
    run.p50_ms = all[all.size() / 2];
    run.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  if (m && m->status == 200) {
    const double count = metric(m->body, "engram_batch_units_count"), sum = metric(m->body, "engram_batch_units_sum");
    run.mean_batch = count > 0 ? sum / count : 0;
  } else {
    ++run.errors;
  }
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"load benchmark of engram serve (one-input requests to a model's route on loopback)"};
  std::string model = std::string(ENGRAM_SOURCE_DIR) + "/tests/golden/models/seq2seq";
  std::vector<int> clients = {1, 8, 64};
  int64_t requests = 2000;
  double seconds = 30;
  std::string inputs_file = model + "/cases.tsv", bodies_file;
  engram::serve::ServeOptions o;
  app.add_option("-m,--model", model, "model directory (any family)");
  app.add_option("--inputs", inputs_file, "seq2seq sentences: the first tab-separated column of each line");
  app.add_option("--bodies", bodies_file, "JSON request bodies, one per line (any family)");
  app.add_option("--clients", clients, "concurrent clients of each run")->delimiter(',');
  app.add_option("--requests", requests, "requests of each run")->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_option("--seconds", seconds, "time limit of each run")->check(CLI::Range(0.1, 3600.0));
  app.add_option("--max-batch", o.max_batch, "the server's --max-batch")->check(CLI::Range(1, 4096));
  app.add_option("--max-wait-ms", o.max_wait_ms, "the server's --max-wait-ms")->check(CLI::Range(0, 60000));
  app.add_option("--workers", o.workers, "the server's --workers")->check(CLI::Range(1, 256));
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<std::string> bodies;
    std::ifstream in(bodies_file.empty() ? inputs_file : bodies_file);
    for (std::string line; std::getline(in, line);)
      if (!line.empty())
        bodies.push_back(bodies_file.empty() ? json{{"src", {line.substr(0, line.find('\t'))}}}.dump() : line);
    if (bodies.empty()) throw std::runtime_error("no requests in " + (bodies_file.empty() ? inputs_file : bodies_file));
    const std::string family = engram::models::load_model(model)->family();
    const std::string route = std::string("/v1/") + engram::models::family(family).route;
    std::printf("%s model %s, route %s, %zu request bodies\n\n", family.c_str(), model.c_str(), route.c_str(),
                bodies.size());
    std::vector<Run> runs;
    for (int c : clients) runs.push_back(run_once(model, route, bodies, c, requests, seconds, o));
    engram::serve::ServeOptions one = o;
    one.max_batch = 1;
    runs.push_back(run_once(model, route, bodies, clients.back(), requests, seconds, one));
    std::printf("| clients | --max-batch | requests | seconds | inputs/s | p50 ms | p99 ms | mean batch | errors |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const Run& r : runs)
      std::printf("| %d | %d | %lld | %.2f | %.1f | %.2f | %.2f | %.2f | %lld |\n", r.clients, r.max_batch,
                  static_cast<long long>(r.sentences + r.errors), r.seconds, r.sentences / r.seconds, r.p50_ms,
                  r.p99_ms, r.mean_batch, static_cast<long long>(r.errors));
    const Run& batched = runs[runs.size() - 2];
    const Run& single = runs.back();
    std::printf("\ndynamic batching vs --max-batch 1 at %d clients: %.2fx inputs/s\n", single.clients,
                (batched.sentences / batched.seconds) / (single.sentences / single.seconds));
    int64_t errors = 0;
    for (const Run& r : runs) errors += r.errors;
    if (std::fflush(stdout) != 0) return 1;
    return errors == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "serve_load: error: %s\n", e.what());
    return 1;
  }
}
