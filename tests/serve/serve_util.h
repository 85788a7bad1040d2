// Helpers for the server tests: the golden models (tests/golden/models/<family>/) with their
// recorded cases, and a Server started in-process on a free port, stopped with the fixture.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engram/serve/http.h"
#include "engram/serve/server.h"

namespace engram::serve::testing {

using nlohmann::json;

inline std::string golden_dir(const std::string& family) {
  return (std::filesystem::path(ENGRAM_SOURCE_DIR) / "tests" / "golden" / "models" / family).string();
}

// INPUT<TAB>EXPECTED lines of the family's cases.tsv: engram's recorded outputs of run_line
// (tests/models/golden_models_test.cc checks the library against the same file).
inline std::vector<std::pair<std::string, std::string>> golden_cases(const std::string& family) {
  std::ifstream in(std::filesystem::path(golden_dir(family)) / "cases.tsv", std::ios::binary);
  EXPECT_TRUE(in.good()) << family;
  std::vector<std::pair<std::string, std::string>> cases;
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    if (tab != std::string::npos) cases.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return cases;
}

// A server over the named golden families, listening on 127.0.0.1:<free port> in a thread.
class RunningServer {
 public:
  RunningServer(const std::vector<std::string>& families, ServeOptions options)
      : RunningServer(options, golden_specs(families)) {}
  // A server over model specs ("DIR" or "NAME=DIR", as `engram serve -m`).
  RunningServer(ServeOptions options, const std::vector<std::string>& specs) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<Server>(load_models(specs), options);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->run(); });
  }
  ~RunningServer() { stop(); }
  static std::vector<std::string> golden_specs(const std::vector<std::string>& families) {
    std::vector<std::string> specs;
    for (const std::string& f : families) specs.push_back(golden_dir(f));
    return specs;
  }
  void stop() {
    if (!server_) return;
    server_->stop();
    thread_.join();
    server_.reset();
  }
  int port() const { return port_; }
  Server& server() { return *server_; }
  httplib::Client client(int timeout_s = 30) const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(timeout_s, 0);
    c.set_write_timeout(timeout_s, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
  int port_ = 0;
};

// POSTs `body` (JSON text) to `path`; returns (status, parsed body), status -1 on no answer.
inline std::pair<int, json> post(httplib::Client& c, const std::string& path, const std::string& body) {
  const httplib::Result r = c.Post(path.c_str(), body, "application/json");
  if (!r) return {-1, json()};
  return {r->status, json::parse(r->body, nullptr, false)};
}
inline std::pair<int, json> post(httplib::Client& c, const std::string& path, const json& body) {
  return post(c, path, body.dump());
}

}  // namespace engram::serve::testing
