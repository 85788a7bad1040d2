// The web explorer's files (web/ in the source tree), built into the binary as byte arrays by
// cmake/embed_web.cmake, so an installed `engram serve` needs no data path to serve them.
#pragma once

#include <span>
#include <string_view>

namespace engram::serve {

struct WebAsset {
  std::string_view path;   // relative to web/, e.g. "index.html", "translate.js"
  std::string_view bytes;  // the file's contents, as committed
};

// Every file of web/, sorted by path (the generated web_assets.cc defines it).
std::span<const WebAsset> web_assets();

}  // namespace engram::serve
