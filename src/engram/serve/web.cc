// The web explorer's static files over HTTP (web.h): lookup, Content-Type, security headers.
#include "engram/serve/web.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "engram/serve/request.h"

namespace engram::serve {

std::optional<std::string_view> content_type(std::string_view path) {
  // Keep in step with known_extensions in cmake/embed_web.cmake.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".json", "application/json"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".txt", "text/plain; charset=utf-8"},
  }};
  for (const auto& [ext, type] : kTypes)
    if (path.size() > ext.size() && path.ends_with(ext)) return type;
  return std::nullopt;
}

const WebAsset* find_web_asset(std::string_view path) {
  const std::span<const WebAsset> all = web_assets();
  const auto it = std::lower_bound(all.begin(), all.end(), path,
                                   [](const WebAsset& a, std::string_view p) { return a.path < p; });
  return it != all.end() && it->path == path ? &*it : nullptr;
}

namespace {

void set_security_headers(httplib::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-cache");  // revalidate: a new binary serves new files
}

void serve_asset(std::string_view path, httplib::Response& res) {
  const WebAsset* a = find_web_asset(path);
  const std::optional<std::string_view> type = a ? content_type(path) : std::nullopt;
  set_security_headers(res);
  if (!a || !type) {
    res.status = 404;
    const nlohmann::json body = {{"error", fmt::format("no file /static/{} (GET / is the explorer)", printable(path))}};
    res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
    return;
  }
  res.status = 200;
  res.set_content(a->bytes.data(), a->bytes.size(), std::string(*type));
}

}  // namespace

void mount_explorer(httplib::Server& http, Metrics& metrics) {
  http.Get("/", [&metrics](const httplib::Request&, httplib::Response& res) {
    serve_asset("index.html", res);
    metrics.request("/static", res.status, 0.0);
  });
  http.Get(R"(/static/(.+))", [&metrics](const httplib::Request& req, httplib::Response& res) {
    serve_asset(req.matches[1].str(), res);
    metrics.request("/static", res.status, 0.0);
  });
}

}  // namespace engram::serve
