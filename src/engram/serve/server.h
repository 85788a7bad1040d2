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
// Errors are {"error": message} with 400 (malformed JSON, wrong types, over a cap), 404 (unknown
// model or route), 413 (body too large), 503 (queue full, shutting down), 504 (timed out).
// Each model is loaded once; requests go through the Batcher (batcher.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engram/models/registry.h"
#include "engram/serve/options.h"

namespace engram::serve {

struct ServedModel {
  std::string name;  // the "model" field of a request
  std::unique_ptr<models::LoadedModel> model;
  const models::Family* family = nullptr;
};

// Loads each spec, "DIR" or "NAME=DIR" (NAME defaults to the directory's name, or its parent's
// when the directory is a run's best/, last/ or model/). Names must differ. Each model decodes
// at `precision` (LoadedModel::set_precision; a family without bf16 refuses it).
std::vector<ServedModel> load_models(const std::vector<std::string>& specs,
                                     decode::Precision precision = decode::Precision::kFp32);

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
  // Stops accepting; requests already received are answered, then run() returns. Any thread.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `engram serve`: loads the models, binds, calls on_listening(port), then serves until SIGTERM
// or SIGINT; requests already received are answered before it returns.
void serve_until_signal(const std::vector<std::string>& model_specs, const ServeOptions& options,
                        const std::function<void(int port)>& on_listening);

}  // namespace engram::serve
