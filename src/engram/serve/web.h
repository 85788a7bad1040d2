// The web explorer's routes on the server (docs/serve.md, "The web explorer"): GET / is
// web/index.html, GET /static/<path> any other file of web/, each with its Content-Type and a
// Content-Security-Policy that lets a page load and fetch from this server only.
#pragma once

#include <optional>
#include <string_view>

#include "engram/serve/http.h"
#include "engram/serve/metrics.h"
#include "engram/serve/web_assets.h"

namespace engram::serve {

// The policy sent with every file: scripts, styles, images and fetches from this origin only;
// no inline script or style attribute, no plugin, no framing, no <base>.
inline constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// The Content-Type of a file by its extension; nullopt for an extension the explorer does not ship.
std::optional<std::string_view> content_type(std::string_view path);

// The embedded file at `path` (relative to web/), or nullptr.
const WebAsset* find_web_asset(std::string_view path);

// Adds GET / and GET /static/<path> to `http`, counted in `metrics` as route "/static".
void mount_explorer(httplib::Server& http, Metrics& metrics);

}  // namespace engram::serve
