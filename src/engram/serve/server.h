// `engram serve`: the HTTP JSON API over loaded models of every family (docs/serve.md).
//
//   POST /v1/<route>          a family's route (Family::route: translate, babi, ntm, pointer,
//                             sentiment, transcribe): {"model": NAME, ...the family's fields}
//   POST /translator/translate  OpenNMT-py's request and response shape (seq2seq models)
//   GET  /v1/models           names, families, routes and configs of the loaded models
//   GET  /health              {"status": "ok", "models": N}
//   GET  /metrics             Prometheus text (metrics.h)
//   GET  /, /static/<file>    the web explorer (web.h, web/)
//
// Errors are {"error": message} with 400 (malformed JSON, duplicate keys, nesting deeper than
// max_json_depth, wrong types, over a cap), 404 (unknown model or route), 408 (headers or body
// too slow), 411, 413 (body too large), 415, 431 (headers too large), 503 (queue full, every HTTP
// thread busy, shutting down), 504 (timed out). Connections: serve/connection.h.
// Each model is loaded once; requests go through the Batcher (batcher.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engram/models/registry.h"
#include "engram/serve/options.h"

namespace engram::serve {

struct ServedModel {
  std::string name;  // the "model" field of a request
  decode::Precision precision = decode::Precision::kFp32;  // its decode-time weights
  std::unique_ptr<models::LoadedModel> model;
  const models::Family* family = nullptr;
};

// Loads each spec, "DIR" or "NAME=DIR" (NAME defaults to the directory's name, or its parent's
// when the directory is a run's best/, last/ or model/). Names must differ. Each model decodes
// at `precision` (LoadedModel::set_precision; a family without bf16 refuses it), or where none is
// given at its own (its run's decode: section), else fp32, as the CLI without --precision.
std::vector<ServedModel> load_models(const std::vector<std::string>& specs,
                                     std::optional<decode::Precision> precision = std::nullopt);

class Server {
 public:
  Server(std::vector<ServedModel> models, const ServeOptions& options);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds options.host:options.port (port 0: a free one); returns the port. An error when the
  // address cannot be bound.
  int bind();
  // Serves until stop(); call after bind(), from one thread.
  void run();
  // Drains, then stops (docs/serve.md, "Shutdown"): /health answers 503 "stopping" and new
  // requests 503; the requests in handlers are answered, until drain_timeout_ms at most (those
  // still waiting then get 503); then the listener closes, connections end (no read or write
  // waits past the drain deadline; a batch already started finishes) and run() returns. Any thread.
  void stop();
  // Only marks the server as stopping (/health 503, new requests 503); async-signal-safe (an
  // atomic store). stop() does the rest.
  void request_stop() noexcept;
  // Answers `bytes` as if one client had sent them on one connection (pipelined requests
  // included), with no socket and no deadlines; returns the bytes the server wrote back. Any
  // thread, after construction (no bind() needed). For tests and fuzz/http_fuzz.cc.
  std::string answer_bytes(std::string_view bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `engram serve`: loads the models, binds, calls on_listening(port), then serves until SIGTERM
// or SIGINT; requests already received are answered before it returns.
void serve_until_signal(const std::vector<std::string>& model_specs, const ServeOptions& options,
                        const std::function<void(int port)>& on_listening);

}  // namespace engram::serve
