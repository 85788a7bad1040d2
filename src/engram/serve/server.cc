// The HTTP layer of `engram serve` (server.h): routes, request checks, error replies, shutdown.
#include "engram/serve/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <sys/socket.h>

#include "engram/io/checkpoint.h"
#include "engram/serve/batcher.h"
#include "engram/serve/connection.h"
#include "engram/serve/http.h"
#include "engram/serve/request.h"
#include "engram/serve/web.h"

namespace engram::serve {

namespace fs = std::filesystem;
using nlohmann::json;

void ServeOptions::validate() const {
  auto in = [](const char* name, long long v, long long lo, long long hi) {
    ENGRAM_CHECK(v >= lo && v <= hi, "serve: {} is {}; it must be in [{}, {}]", name, v, lo, hi);
  };
  in("port", port, 0, 65535);
  in("workers", workers, 1, 256);
  in("threads", threads, 1, 256);
  in("http_threads", http_threads, 1, 4096);
  in("max_batch", max_batch, 1, 4096);
  in("max_wait_ms", max_wait_ms, 0, 60000);
  in("max_queue", max_queue, 1, 1 << 24);
  in("max_body_bytes", static_cast<long long>(max_body_bytes), 1, 1ll << 30);
  in("request_timeout_ms", request_timeout_ms, 1, 3600000);
  in("max_json_depth", max_json_depth, 1, 256);
  in("header_timeout_ms", header_timeout_ms, 1, 3600000);
  in("body_timeout_ms", body_timeout_ms, 1, 3600000);
  in("idle_timeout_ms", idle_timeout_ms, 1, 3600000);
  in("drain_timeout_ms", drain_timeout_ms, 0, 3600000);
  in("max_header_bytes", static_cast<long long>(max_header_bytes), 1024, 1 << 24);
  in("max_items", limits.max_items, 1, 1 << 16);
  in("max_tokens", limits.max_tokens, 1, 1 << 16);
  in("max_beam", limits.max_beam, 1, 256);
  in("max_n_best", limits.max_n_best, 1, 256);
  in("max_length", limits.max_length, 1, 1 << 16);
  ENGRAM_CHECK(!host.empty(), "serve: an empty host");
}

std::vector<ServedModel> load_models(const std::vector<std::string>& specs, std::optional<decode::Precision> precision) {
  ENGRAM_CHECK(!specs.empty(), "serve: no model (-m DIR or -m NAME=DIR)");
  std::vector<ServedModel> out;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    ServedModel m;
    fs::path dir = eq == std::string::npos ? spec : spec.substr(eq + 1);
    if (eq != std::string::npos) {
      m.name = spec.substr(0, eq);
    } else {
      const fs::path p = dir.lexically_normal();
      const fs::path d = p.has_filename() ? p : p.parent_path();
      const std::string last = d.filename().string();
      m.name = (last == "best" || last == "last" || last == "model") ? d.parent_path().filename().string() : last;
    }
    ENGRAM_CHECK(!m.name.empty() && m.name.find_first_of(" \"\\\n") == std::string::npos,
                 "serve: '{}' gives the model name '{}'; name it with -m NAME=DIR", spec, m.name);
    for (const ServedModel& o : out)
      ENGRAM_CHECK(o.name != m.name, "serve: two models named '{}'; name them with -m NAME=DIR", m.name);
    m.model = models::load_model(dir);
    m.precision = precision ? *precision : m.model->own_precision();
    m.model->set_precision(m.precision);  // once, before any worker reads the model
    m.family = &models::family(m.model->family());
    ENGRAM_CHECK(m.family->route != nullptr, "serve: the {} family has no route", m.family->name);
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

constexpr int kListenBacklog = 1024;  // connections waiting to be accepted

// A config.yaml value as JSON: maps, sequences, and scalars as numbers or booleans when they
// read as one, else strings.
json yaml_to_json(const YAML::Node& n) {
  if (n.IsMap()) {
    json o = json::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return o;
  }
  if (n.IsSequence()) {
    json a = json::array();
    for (const auto& v : n) a.push_back(yaml_to_json(v));
    return a;
  }
  if (!n.IsScalar()) return nullptr;
  const std::string s = n.Scalar();
  if (s == "true" || s == "false") return s == "true";
  long long i = 0;
  double d = 0;
  if (YAML::convert<long long>::decode(n, i)) return i;
  if (YAML::convert<double>::decode(n, d)) return d;
  return s;
}

// Sends `body`; its "error" message, which may quote the request, with bytes that are not
// printable UTF-8 written as \xNN (request.h) and cut at 2,000 bytes.
void reply(httplib::Response& res, int status, json body) {
  res.status = status;
  if (auto e = body.find("error"); e != body.end() && e->is_string())
    *e = printable(e->get_ref<const std::string&>(), 2000);
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

}  // namespace

struct Server::Impl {
  std::vector<ServedModel> models;
  ServeOptions o;
  Metrics metrics;
  std::unique_ptr<Batcher> batcher;
  std::unique_ptr<HttpServer> http;
  std::atomic<bool> stopping{false};
  // Requests inside a POST handler; stop() waits (up to the drain deadline) until none is left.
  std::mutex active_mu;
  std::condition_variable active_cv;
  int active = 0;
  std::atomic<int> state{0};  // 0 run() not entered, 1 running, 2 returned
  int port = -1;
  int listen_socket = -1;  // set by the socket options callback when binding

  // The answer to one request of a family route: the status and body. A streaming request
  // ("stream": true) that was queued returns {200, null} with its job in *stream (its answer is
  // sent as events: stream_reply); without `stream` it is refused.
  std::pair<int, json> family_request(const models::Family& family, const json& body,
                                      std::shared_ptr<Job>* stream = nullptr) {
    if (!body.is_object()) return {400, {{"error", fmt::format("the request body must be a JSON object, got {}", body.type_name())}}};
    // The model: named, or the only one of the family.
    size_t index = models.size();
    const auto name = body.find("model");
    if (name != body.end() && !name->is_null()) {
      if (!name->is_string()) return {400, {{"error", "'model' must be a string"}}};
      for (size_t i = 0; i < models.size(); ++i)
        if (models[i].name == name->get_ref<const std::string&>()) index = i;
      if (index == models.size())
        return {404, {{"error", fmt::format("no model named '{}' (GET /v1/models lists them)",
                                            printable(name->get_ref<const std::string&>()))}}};
      if (models[index].family != &family)
        return {400, {{"error", fmt::format("model '{}' is a {} model; /v1/{} serves {} models", models[index].name,
                                            models[index].family->name, family.route, family.name)}}};
    } else {
      int count = 0;
      for (size_t i = 0; i < models.size(); ++i)
        if (models[i].family == &family) index = i, ++count;
      if (count != 1)
        return {count == 0 ? 404 : 400,
                {{"error", count == 0 ? fmt::format("no {} model is loaded", family.name)
                                      : fmt::format("{} {} models are loaded: name one with 'model'", count, family.name)}}};
    }
    std::unique_ptr<models::Request> request;
    try {
      request = models[index].model->request(body, o.limits);
    } catch (const Error& e) {
      return {400, {{"error", e.what()}}};
    }
    if (request->options.stream && !stream) return {400, {{"error", "this route does not stream: leave out 'stream'"}}};
    const int units = request->units;
    if (units > o.max_queue)  // it would wait forever on an idle server: never a 503
      return {400, {{"error", fmt::format("the request has {} units, more than max_queue {} can ever hold: split it",
                                          units, o.max_queue)}}};
    if (stopping) return {503, {{"error", "the server is shutting down"}}};
    auto job = std::make_shared<Job>(std::move(request));
    if (!batcher->submit(index, job))
      return {503, {{"error", fmt::format("model '{}' has {} units waiting (max_queue {}): try again later",
                                          models[index].name, batcher->queued_units(index), o.max_queue)}}};
    if (job->request().options.stream) {
      *stream = std::move(job);
      return {200, nullptr};
    }
    // Waits for the answer in slices, so that a drain begun meanwhile ends the wait at its deadline.
    const Clock::time_point deadline = job->queued() + std::chrono::milliseconds(o.request_timeout_ms);
    for (;;) {
      const Clock::time_point drain = drain_deadline();
      const Clock::time_point now = Clock::now();
      if (now >= drain) {
        job->abandon();
        return {503, {{"error", fmt::format("the server is shutting down: no answer within drain_timeout_ms {}",
                                            o.drain_timeout_ms)}}};
      }
      if (now >= deadline) {
        job->abandon();
        return {504, {{"error", fmt::format("no answer within request_timeout_ms {}", o.request_timeout_ms)}}};
      }
      if (job->wait_until(std::min({deadline, drain, now + std::chrono::milliseconds(100)}))) break;
    }
    return {job->status(), job->body()};
  }

  // OpenNMT-py's POST /translator/translate: [{"src": text, "id": model}, ...] ->
  // [[{"src", "tgt", "n_best", "pred_score"}, ...]]; errors {"error", "status": "error"}.
  std::pair<int, json> opennmt_request(const json& body) {
    auto fail = [](int status, const std::string& message) {
      return std::pair<int, json>{status, {{"error", message}, {"status", "error"}}};
    };
    if (!body.is_array() || body.empty()) return fail(400, "the request body must be a non-empty JSON array of {\"src\": ...}");
    json ours = {{"src", json::array()}};
    const json* id = nullptr;
    for (const json& item : body) {
      if (!item.is_object() || !item.contains("src") || !item["src"].is_string())
        return fail(400, "each item must be an object with a string 'src'");
      const auto it = item.find("id");
      if (it != item.end()) {
        if (id && *id != *it) return fail(400, "every item of one request must name the same model 'id'");
        id = &*it;
      }
      ours["src"].push_back(item["src"]);
    }
    // 'id': a model name, or the position of the seq2seq model among them (0-based).
    const models::Family& seq2seq = models::family("seq2seq");
    if (id) {
      if (id->is_string()) {
        ours["model"] = *id;
      } else if (id->is_number_integer()) {
        int64_t k = id->get<int64_t>();
        for (const ServedModel& m : models)
          if (m.family == &seq2seq && k-- == 0) ours["model"] = m.name;
        if (!ours.contains("model")) return fail(404, fmt::format("no seq2seq model with id {}", id->dump()));
      } else {
        return fail(400, "'id' must be a model name or a number");
      }
    }
    auto [status, out] = family_request(seq2seq, ours);
    if (status != 200) return fail(status, out.value("error", "error"));
    json rows = json::array();
    for (size_t i = 0; i < body.size(); ++i) {
      for (const json& h : out["translations"][i])
        rows.push_back({{"src", body[i]["src"]}, {"tgt", h["tgt"]}, {"n_best", 1}, {"pred_score", h["score"]}});
      if (out["translations"][i].empty())  // an empty source: one empty translation, as OpenNMT-py
        rows.push_back({{"src", body[i]["src"]}, {"tgt", ""}, {"n_best", 1}, {"pred_score", 0.0}});
    }
    return {200, json::array({rows})};
  }

  json models_json() const {
    json list = json::array();
    for (const ServedModel& m : models) {
      json config;
      try {
        config = yaml_to_json(io::read_checkpoint_info(m.model->dir()).config);
      } catch (const std::exception&) {
        config = nullptr;  // the directory changed since loading: the listing still answers
      }
      list.push_back({{"name", m.name},
                      {"family", m.family->name},
                      {"route", fmt::format("/v1/{}", m.family->route)},
                      {"dir", m.model->dir().string()},
                      {"input", m.model->input_help()},
                      {"precision", decode::precision_name(m.precision)},
                      {"config", std::move(config)}});
    }
    return {{"models", std::move(list)}};
  }

  Clock::time_point drain_deadline() const {
    return drain_ns == 0 ? Clock::time_point::max() : Clock::time_point(std::chrono::nanoseconds(drain_ns.load()));
  }
  std::atomic<int64_t> drain_ns{0};  // steady-clock ns of the drain deadline; 0 before stop()

  // Reads the body of a POST through `reader`, cut off at max_body_bytes whatever its framing
  // (httplib bounds only a Content-Length body), and parses it (request.h). On failure: the
  // status and error, and the connection is closed after the answer.
  std::pair<int, std::string> read_json(const httplib::ContentReader& reader, json& out) {
    std::string body;
    bool too_large = false;
    const bool ok = reader([&](const char* data, size_t n) {
      if (body.size() + n > o.max_body_bytes) return !(too_large = true);
      body.append(data, n);
      return true;
    });
    RequestState* r = current_request();
    if (!ok) {
      if (r) r->close = true;
      if (too_large || (r && r->body_too_large))
        return {413, fmt::format("the request body is larger than max_body_bytes {}", o.max_body_bytes)};
      if (r && r->timed_out)
        return {408, fmt::format("the request body did not arrive within body_timeout_ms {}", o.body_timeout_ms)};
      return {400, "the request body could not be read (broken chunked framing or an early end)"};
    }
    ParsedBody parsed = parse_body(body, o.max_json_depth);
    if (!parsed.error.empty()) return {400, parsed.error};
    out = std::move(parsed.value);
    return {200, ""};
  }

  // Counts a POST handler as active while `fn` runs (stop() waits for the active ones;
  // /metrics shows the count as engram_requests_in_flight).
  template <class Fn>
  void active_request(Fn&& fn) {
    {
      const std::lock_guard<std::mutex> lock(active_mu);
      metrics.in_flight(++active);
    }
    struct Done {
      Impl& s;
      ~Done() {
        {
          const std::lock_guard<std::mutex> lock(s.active_mu);
          s.metrics.in_flight(--s.active);
        }
        s.active_cv.notify_all();
      }
    } done{*this};
    fn();
  }

  // Answers a queued streaming job with Server-Sent Events (text/event-stream): one
  // "event: token" per token as the worker chooses it (data: the family's token event with its
  // input's "index"), then "event: result" with the whole answer the route gives without
  // streaming, or "event: error" with {"error", "status"} (a failed batch, request_timeout_ms,
  // the drain). A client that goes away abandons the job.
  void stream_reply(httplib::Response& res, std::shared_ptr<Job> job) {
    res.status = 200;
    res.body.clear();
    res.headers.erase("Content-Type");  // timed()'s JSON reply, replaced by the stream
    res.set_header("Cache-Control", "no-cache");
    const Clock::time_point deadline = job->queued() + std::chrono::milliseconds(o.request_timeout_ms);
    res.set_chunked_content_provider("text/event-stream", [this, job, deadline](size_t, httplib::DataSink& sink) {
      auto send = [&](const char* name, const json& data) {
        const std::string text = fmt::format("event: {}\ndata: {}\n\n", name,
                                             data.dump(-1, ' ', false, json::error_handler_t::replace));
        return sink.write(text.data(), text.size());
      };
      json event;
      for (;;) {
        switch (job->next(&event, std::min(deadline, drain_deadline()))) {
          case Job::Next::kEvent:
            if (!send("token", event)) {
              job->abandon();
              return false;
            }
            continue;
          case Job::Next::kDone:
            if (job->status() == 200) send("result", job->body());
            else send("error", {{"error", printable(job->body().value("error", "error"), 2000)}, {"status", job->status()}});
            sink.done();
            return true;
          case Job::Next::kTimeout:
            job->abandon();
            send("error", Clock::now() >= drain_deadline()
                              ? json{{"error", "the server is shutting down"}, {"status", 503}}
                              : json{{"error", fmt::format("no answer within request_timeout_ms {}", o.request_timeout_ms)},
                                     {"status", 504}});
            sink.done();
            return true;
        }
      }
    });
  }

  void routes() {
    for (const models::Family* f : models::families()) {
      if (!f->route) continue;
      const std::string path = fmt::format("/v1/{}", f->route);
      http->Post(path, [this, f, path](const httplib::Request&, httplib::Response& res,
                                       const httplib::ContentReader& reader) {
        active_request([&] {
          std::shared_ptr<Job> stream;
          timed(path, res, [&] {
            json body;
            if (auto [status, error] = read_json(reader, body); status != 200)
              return std::pair<int, json>{status, {{"error", error}}};
            return family_request(*f, body, &stream);
          });
          if (stream) stream_reply(res, std::move(stream));
        });
      });
    }
    http->Post("/translator/translate", [this](const httplib::Request&, httplib::Response& res,
                                               const httplib::ContentReader& reader) {
      active_request([&] {
        timed("/translator/translate", res, [&] {
          json body;
          if (auto [status, error] = read_json(reader, body); status != 200)
            return std::pair<int, json>{status, {{"error", error}, {"status", "error"}}};
          return opennmt_request(body);
        });
      });
    });
    http->Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      timed("/v1/models", res, [&] { return std::pair<int, json>{200, models_json()}; });
    });
    http->Get("/health", [this](const httplib::Request&, httplib::Response& res) {
      timed("/health", res, [&] {
        return std::pair<int, json>{stopping ? 503 : 200,
                                    {{"status", stopping ? "stopping" : "ok"}, {"models", models.size()}}};
      });
    });
    http->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.text(), "text/plain; version=0.0.4");
    });
    mount_explorer(*http, metrics);  // GET / and /static/...: the web explorer (web.h)
    // Replies httplib makes itself (404 unknown path, 413 body too large, 400 bad request) in JSON,
    // and the connection layer's reasons for them (connection.h). After a 400 of httplib's own
    // the input is out of step: the connection is closed.
    http->set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          std::string message = fmt::format("HTTP {}", res.status);
          if (res.status == 404) message = fmt::format("no route {} {}", printable(req.method, 20), printable(req.path));
          if (res.status == 413) message = fmt::format("the request body is larger than max_body_bytes {}", o.max_body_bytes);
          if (res.status == 405) message = fmt::format("{} does not take {}", printable(req.path), printable(req.method, 20));
          if (res.status == 400) message = "a malformed request line or header";
          if (RequestState* r = current_request(); r && res.status >= 400 && res.status != 404 && res.status != 405) {
            r->close = true;
            if (r->timed_out && r->phase == RequestState::Phase::head)
              res.status = 408, message = fmt::format("the request headers did not arrive within header_timeout_ms {}",
                                                      r->triage ? http->options().triage_timeout_ms : o.header_timeout_ms);
            else if (r->timed_out)
              res.status = 408, message = fmt::format("the request body did not arrive within body_timeout_ms {}", o.body_timeout_ms);
            else if (r->head_too_large)
              res.status = 431, message = fmt::format("the request line and headers are larger than max_header_bytes {}",
                                                      o.max_header_bytes);
            else if (r->body_too_large)
              res.status = 413, message = fmt::format("the request body is larger than max_body_bytes {}", o.max_body_bytes);
          }
          metrics.request("other", res.status, 0.0);
          reply(res, res.status, {{"error", message}});
          return httplib::Server::HandlerResponse::Handled;
        }));
    http->set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string message = "internal error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        message = e.what();
      } catch (...) {
      }
      reply(res, 500, {{"error", message}});
    });
  }

  template <class Fn>
  void timed(const std::string& route, httplib::Response& res, Fn&& fn) {
    const Clock::time_point start = Clock::now();
    auto [status, body] = fn();
    reply(res, status, body);
    metrics.request(route, status, std::chrono::duration<double>(Clock::now() - start).count());
  }
};

Server::Server(std::vector<ServedModel> models, const ServeOptions& options) : impl_(std::make_unique<Impl>()) {
  options.validate();
  Impl& s = *impl_;
  s.models = std::move(models);
  s.o = options;
  std::vector<BatchedModel> batched;
  for (const ServedModel& m : s.models) batched.push_back({m.name, m.model.get()});
  s.batcher = std::make_unique<Batcher>(std::move(batched),
                                        BatcherOptions{options.workers, options.threads, options.max_batch,
                                                       options.max_wait_ms, options.max_queue},
                                        s.metrics);
  ConnectionOptions c;
  c.http_threads = options.http_threads;
  c.header_timeout_ms = options.header_timeout_ms;
  c.body_timeout_ms = options.body_timeout_ms;
  c.idle_timeout_ms = options.idle_timeout_ms;
  c.max_header_bytes = options.max_header_bytes;
  c.max_body_bytes = options.max_body_bytes;
  s.http = std::make_unique<HttpServer>(c);
  const int http_threads = options.http_threads;
  s.http->new_task_queue = [http_threads] { return new ConnectionPool(http_threads); };
  s.http->set_payload_max_length(options.max_body_bytes);
  // The listening socket: SO_REUSEADDR as httplib's default does; kept to raise its backlog
  // after bind (the library listens with a backlog of 5, which drops bursts of connections).
  s.http->set_socket_options([&s](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    s.listen_socket = sock;
  });
  s.routes();
}

Server::~Server() { stop(); }

int Server::bind() {
  Impl& s = *impl_;
  s.port = s.o.port == 0 ? s.http->bind_to_any_port(s.o.host) : (s.http->bind_to_port(s.o.host, s.o.port) ? s.o.port : -1);
  ENGRAM_CHECK(s.port > 0, "serve: cannot listen on {}:{} (in use, or not an address of this machine)", s.o.host, s.o.port);
  ENGRAM_CHECK(s.listen_socket >= 0 && ::listen(s.listen_socket, kListenBacklog) == 0,
               "serve: cannot set the listen backlog of {}:{}", s.o.host, s.port);
  return s.port;
}

void Server::run() {
  Impl& s = *impl_;
  ENGRAM_CHECK(s.port > 0, "serve: run() before bind()");
  s.state = 1;
  if (!s.stopping) s.http->listen_after_bind();  // returns after stop(), its handlers finished
  s.batcher->stop();
  s.state = 2;
}

std::string Server::answer_bytes(std::string_view bytes) { return impl_->http->answer(bytes); }

void Server::request_stop() noexcept { impl_->stopping.store(true); }

void Server::stop() {
  Impl& s = *impl_;
  s.stopping = true;
  if (s.drain_ns == 0) {
    const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(s.o.drain_timeout_ms);
    s.drain_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
    s.http->begin_drain(deadline);
    // Still listening while the POST handlers in flight finish (new ones answer 503 at once,
    // /health 503 "stopping"), at most until the drain deadline.
    std::unique_lock<std::mutex> lock(s.active_mu);
    s.active_cv.wait_until(lock, deadline, [&] { return s.active == 0; });
  }
  while (s.state == 1) {  // run() may not have started listening yet: repeat until it returns
    s.http->stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

namespace {

// Set by the handler below, read by serve_until_signal. The signal may be handled on any thread
// of the process (an HTTP or batcher thread as well as the one polling), and volatile
// sig_atomic_t is only safe for a handler on the same thread: a lock-free atomic is safe from
// every thread and in a handler (tests/serve/sigterm_test.cc, under ThreadSanitizer).
std::atomic<int> g_signal{0};
std::atomic<Server*> g_server{nullptr};  // the server the signal stops (its request_stop is a store)
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<Server*>::is_always_lock_free);
// The server's request_stop comes before g_signal's store: the thread that sees g_signal goes on to
// stop and destroy the server, so nothing may touch the server after that store.
extern "C" void on_stop_signal(int sig) {
  if (Server* s = g_server.load()) s->request_stop();  // /health says "stopping" from now on
  g_signal.store(sig);
}

}  // namespace

void serve_until_signal(const std::vector<std::string>& model_specs, const ServeOptions& options,
                        const std::function<void(int port)>& on_listening) {
  options.validate();
  Server server(load_models(model_specs, options.precision), options);
  const int port = server.bind();
  g_signal.store(0);
  g_server.store(&server);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_term {}, old_int {};
  ENGRAM_CHECK(sigaction(SIGTERM, &sa, &old_term) == 0 && sigaction(SIGINT, &sa, &old_int) == 0,
               "serve: cannot install the SIGTERM handler");
  std::thread runner([&] { server.run(); });
  auto finish = [&] {
    server.request_stop();
    g_server.store(nullptr);  // a later signal no longer reaches this server
    server.stop();
    runner.join();
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGINT, &old_int, nullptr);
  };
  try {
    on_listening(port);
  } catch (...) {  // e.g. the port cannot be printed: stop serving, then report
    finish();
    throw;
  }
  while (g_signal.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  finish();
}

}  // namespace engram::serve
