// `engram serve -m DIR [-m NAME=DIR ...] [--host 127.0.0.1] [--port 8080] [limits]`: the JSON API
// over loaded models of every family, with dynamic batching (docs/serve.md). Prints
// "engram serve: listening on http://HOST:PORT" (with the port chosen when --port 0) and serves
// until SIGTERM or SIGINT, answering the requests already received. A thin adapter over
// serve/server.h.
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/cli/options.h"
#include "engram/serve/server.h"

namespace engram::cli {

namespace {

struct ServeArgs {
  std::vector<std::string> models;
  serve::ServeOptions options;
};

void run_serve(const ServeArgs& a) {
  serve::serve_until_signal(a.models, a.options, [&](int port) {
    std::printf("engram serve: listening on http://%s:%d\n", a.options.host.c_str(), port);
    ENGRAM_CHECK(std::fflush(stdout) == 0, "serve: cannot write to standard output");
  });
}

}  // namespace

void register_serve(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  serve::ServeOptions& o = a->options;
  auto* cmd = app.add_subcommand("serve", "serve loaded models over HTTP as a JSON API, with dynamic batching");
  cmd->add_option("-m,--model", a->models, "model directory, or NAME=DIR (repeat for more models)")->required();
  cmd->add_option("--host", o.host, "address to bind (0.0.0.0: every interface)");
  cmd->add_option("--port", o.port, "port (0: a free one, printed)")->check(CLI::Range(0, 65535));
  cmd->add_option("--workers", o.workers, "decoding threads shared by the models")->check(CLI::Range(1, 256));
  add_threads_option(cmd, o.threads);
  cmd->add_option("--http-threads", o.http_threads, "connections handled at once")->check(CLI::Range(1, 4096));
  cmd->add_option("--max-batch", o.max_batch, "most units (seq2seq: sentences) decoded together")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-wait-ms", o.max_wait_ms, "longest a batch waits to fill after its first request")
      ->check(CLI::Range(0, 60000));
  cmd->add_option("--max-queue", o.max_queue, "units waiting per model before requests get 503")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--max-body-bytes", o.max_body_bytes, "largest request body (413 beyond)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30));
  cmd->add_option("--request-timeout-ms", o.request_timeout_ms, "waiting plus decoding (504 beyond)")
      ->check(CLI::Range(1, 3600000));
  cmd->add_option("--max-json-depth", o.max_json_depth, "arrays / objects nested in a request body (400 beyond)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--header-timeout-ms", o.header_timeout_ms, "request line + headers, in total (408 beyond)")
      ->check(CLI::Range(1, 3600000));
  cmd->add_option("--body-timeout-ms", o.body_timeout_ms, "a request body after its headers, in total (408 beyond)")
      ->check(CLI::Range(1, 3600000));
  cmd->add_option("--idle-timeout-ms", o.idle_timeout_ms, "a kept-alive connection between requests (closed beyond)")
      ->check(CLI::Range(1, 3600000));
  cmd->add_option("--drain-timeout-ms", o.drain_timeout_ms, "SIGTERM: longest wait for requests in flight (503 beyond)")
      ->check(CLI::Range(0, 3600000));
  cmd->add_option("--max-header-bytes", o.max_header_bytes, "request line + headers (431 beyond)")
      ->check(CLI::Range(size_t{1024}, size_t{1} << 24));
  cmd->add_option("--max-items", o.limits.max_items, "sentences per translate request; points; story sentences")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--max-tokens", o.limits.max_tokens, "tokens of one sentence or tree")->check(CLI::Range(1, 1 << 16));
  // --precision from the decode-options schema, as every verb's; given, it is every model's (else
  // each model's own: ServeOptions::precision).
  auto decode = std::make_shared<decode::DecodeOptions>();
  add_config_flags(cmd, decode, {"precision"});
  cmd->add_option("--max-beam", o.limits.max_beam, "largest beam, samples or views a request may ask for")->check(CLI::Range(1, 256));
  cmd->add_option("--max-n-best", o.limits.max_n_best, "largest n_best a request may ask for")->check(CLI::Range(1, 256));
  cmd->add_option("--max-length", o.limits.max_length,
                  "largest max_length / min_length a request may ask for; ntm: longest sequence")->check(CLI::Range(1, 1 << 16));
  cmd->callback([a, decode, cmd] {
    if (cmd->get_option("--precision")->count() > 0) a->options.precision = decode->precision;
    run_serve(*a);
  });
}

}  // namespace engram::cli
