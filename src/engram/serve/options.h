// The server's settings (`engram serve` flags; docs/serve.md, docs/limits.md). Each limit has a
// default and a clear error when a request passes it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "engram/models/registry.h"

namespace engram::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";  // bind address (0.0.0.0 serves every interface: say so)
  int port = 8080;                 // 0 = a free port (Server::bind returns it)
  int workers = 2;                 // decoding threads shared by every model (each call: its own graph)
  int threads = 1;                 // threads of each worker (its own and its team's)
  int http_threads = 128;          // connections handled at once (more wait to be accepted)
  // Dynamic batching: a worker takes the oldest waiting request of a model and every request
  // behind it up to max_batch units (seq2seq: sentences), waiting at most max_wait_ms after the
  // oldest arrived for the batch to fill. A request larger than max_batch is decoded alone.
  int max_batch = 32;
  int max_wait_ms = 5;
  int max_queue = 1024;                // units waiting per model; beyond: 503 (a request of more units: 400)
  size_t max_body_bytes = 1u << 20;    // request body; beyond: 413
  int request_timeout_ms = 30000;      // waiting plus decoding; beyond: 504 (a started batch still finishes)
  int max_json_depth = 64;             // arrays / objects nested in a request body; deeper: 400
  // Connections (serve/connection.h): total deadlines, not per-read timeouts.
  int header_timeout_ms = 20000;       // request line + headers; beyond: 408
  int body_timeout_ms = 60000;         // the body after the headers; writing a response; beyond: 408
  int idle_timeout_ms = 5000;          // a kept-alive connection between requests; beyond: closed
  int drain_timeout_ms = 25000;        // SIGTERM / stop(): unanswered requests beyond it get 503, then exit
  size_t max_header_bytes = 64u << 10;  // request line + headers; beyond: 431
  models::ServeLimits limits;          // per-request caps (400)
  // Decode-time weights of every model; none: each model's own (its run's decode: section), else fp32.
  std::optional<decode::Precision> precision;

  void validate() const;  // each field in range, else an engram::Error naming it
};

}  // namespace engram::serve
