// The web explorer's files in the binary (serve/web.h): every file of web/ is embedded as it is
// on disk, has a Content-Type, and is referenced by index.html; over HTTP, GET / and
// GET /static/<file> answer with their type and the security headers, anything else is a 404.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

#include "engram/serve/web.h"
#include "serve/serve_util.h"

namespace engram::serve {
namespace {

namespace fs = std::filesystem;
using namespace testing;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  EXPECT_TRUE(in.good()) << p;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(ServeWeb, EveryFileOfWebIsEmbeddedAsOnDiskWithAType) {
  const fs::path web = fs::path(ENGRAM_SOURCE_DIR) / "web";
  std::set<std::string> on_disk;
  for (const auto& e : fs::recursive_directory_iterator(web))
    if (e.is_regular_file()) on_disk.insert(fs::relative(e.path(), web).generic_string());
  std::set<std::string> embedded;
  std::string_view previous;
  for (const WebAsset& a : web_assets()) {
    EXPECT_LT(previous, a.path) << "web_assets() is sorted (find_web_asset searches it)";
    previous = a.path;
    embedded.insert(std::string(a.path));
    EXPECT_EQ(a.bytes, read_file(web / a.path)) << a.path << ": rebuild to embed the current file";
    EXPECT_TRUE(content_type(a.path).has_value()) << a.path;
    EXPECT_EQ(find_web_asset(a.path), &a);
  }
  EXPECT_EQ(embedded, on_disk);
  EXPECT_EQ(find_web_asset("nope.js"), nullptr);
  EXPECT_EQ(find_web_asset("../CMakeLists.txt"), nullptr);
  EXPECT_EQ(content_type("a.js").value_or(""), "text/javascript; charset=utf-8");
  EXPECT_EQ(content_type("index.html").value_or(""), "text/html; charset=utf-8");
  EXPECT_FALSE(content_type("notes.md").has_value());
  EXPECT_FALSE(content_type(".js").has_value());
}

TEST(ServeWeb, IndexReferencesEveryScriptAndStylesheet) {
  const WebAsset* index = find_web_asset("index.html");
  ASSERT_NE(index, nullptr);
  const std::string html(index->bytes);
  std::set<std::string> referenced;
  const std::regex ref(R"re((?:src|href)="/static/([^"]+)")re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ref); it != std::sregex_iterator(); ++it) {
    referenced.insert((*it)[1].str());
    EXPECT_NE(find_web_asset((*it)[1].str()), nullptr) << "index.html loads /static/" << (*it)[1].str();
  }
  for (const WebAsset& a : web_assets()) {
    if (a.path.ends_with(".js") || a.path.ends_with(".css")) {
      EXPECT_TRUE(referenced.count(std::string(a.path))) << a.path << " is not loaded by index.html";
    }
  }
  // No inline script or style: the Content-Security-Policy would refuse them.
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_EQ(html.find("style="), std::string::npos);
  EXPECT_EQ(html.find("<style"), std::string::npos);
}

TEST(ServeWeb, ServesTheFilesWithTheirTypeAndTheSecurityPolicy) {
  RunningServer s({"seq2seq"}, ServeOptions{});
  httplib::Client c = s.client();
  for (const auto& [path, file] : {std::pair{"/", "index.html"}, {"/static/common.js", "common.js"},
                                   {"/static/style.css", "style.css"}, {"/static/favicon.svg", "favicon.svg"}}) {
    const httplib::Result r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->get_header_value("Content-Type"), content_type(file).value_or("?")) << path;
    EXPECT_EQ(r->get_header_value("Content-Security-Policy"), kContentSecurityPolicy) << path;
    EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_EQ(r->body, find_web_asset(file)->bytes) << path;
  }
  for (const char* path : {"/static/nope.js", "/static/..%2FCMakeLists.txt", "/static/", "/index.htm"}) {
    const httplib::Result r = c.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    const json body = json::parse(r->body, nullptr, false);
    EXPECT_TRUE(body.is_object() && body.contains("error")) << path << ": " << r->body;
  }
  // The JSON routes are untouched beside it.
  const httplib::Result models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 200);
}

}  // namespace
}  // namespace engram::serve
