// Helpers for the server tests: the golden models (tests/golden/models/<family>/) with their
// recorded cases, and a Server started in-process on a free port, stopped with the fixture.
#pragma once

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
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
#include "models/golden_cases.h"

namespace engram::serve::testing {

using nlohmann::json;

inline std::string golden_dir(const std::string& family) {
  return engram::testing::golden_dir(family).string();
}
using engram::testing::golden_cases;

// A server over the named golden families, listening on 127.0.0.1:<free port> in a thread.
class RunningServer {
 public:
  RunningServer(const std::vector<std::string>& families, ServeOptions options)
      : RunningServer(options, golden_specs(families)) {}
  // A server over model specs ("DIR" or "NAME=DIR", as `engram serve -m`).
  RunningServer(ServeOptions options, const std::vector<std::string>& specs) {
    options.host = "127.0.0.1";
    options.port = 0;
    server_ = std::make_unique<Server>(load_models(specs, options.precision), options);
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

// A raw TCP connection to 127.0.0.1:port, for what httplib's client does not send: bytes one at
// a time, conflicting headers, chunked bodies of any size.
class RawConnection {
 public:
  explicit RawConnection(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  bool connected() const { return connected_; }
  // False once the server has closed (or reset) the connection.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // True when the server has sent something (or closed) within `wait`.
  bool readable(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
  }
  // What the server sends until it closes, a whole response is in (headers and Content-Length
  // bytes), or `wait` passes.
  std::string read_response(std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    std::string out;
    for (;;) {
      const size_t head = out.find("\r\n\r\n");
      if (head != std::string::npos) {
        const size_t cl = out.find("Content-Length: ");
        if (cl != std::string::npos && cl < head && out.size() >= head + 4 + std::stoul(out.substr(cl + 16))) return out;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !readable(left)) return out;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }
  // True when the server closes the connection within `wait` (what it sent first is dropped).
  bool closed_within(std::chrono::milliseconds wait) {
    const auto until = std::chrono::steady_clock::now() + wait;
    while (!closed_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      read_response(left);
    }
    return true;
  }

 private:
  int fd_ = -1;
  bool connected_ = false, closed_ = false;
};

// The status of an HTTP response's text ("HTTP/1.1 408 ..." -> 408), -1 when there is none.
inline int status_of(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return -1;
  return std::atoi(response.c_str() + 9);
}
// The body of an HTTP response's text, parsed as JSON (an empty object when it is not JSON).
inline json body_of(const std::string& response) {
  const size_t head = response.find("\r\n\r\n");
  json body = json::parse(head == std::string::npos ? std::string() : response.substr(head + 4), nullptr, false);
  return body.is_discarded() ? json::object() : body;
}

}  // namespace engram::serve::testing
