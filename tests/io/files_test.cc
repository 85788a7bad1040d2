// write_output_file goes through what is at an output path (devices, FIFOs, links) and never
// replaces a node that is not a regular file; read_file_limited stops at its limit whatever it
// reads; the model-directory readers and configs use both.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "engram/core/read_file.h"
#include "engram/io/checkpoint.h"
#include "engram/io/config.h"
#include "engram/io/files.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace engram::io {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::expect_message;
using testing::read_bytes;
using testing::TempDir;

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(WriteOutputFile, NewAndRegularFilesAreReplacedWholeKeepingTheirMode) {
  TempDir t;
  const fs::path p = t / "attn.svg";
  write_output_file(p, "<svg/>");
  EXPECT_EQ(read_bytes(p), "<svg/>");
  ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
  write_output_file(p, "<svg>2</svg>");
  EXPECT_EQ(read_bytes(p), "<svg>2</svg>");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(entries(t.path()), 1u);  // no temporary file left
  expect_message(error_of([&] { write_output_file(t / "missing" / "x.svg", "<svg/>"); }),
                 {(t / "missing" / "x.svg").string(), "No such file or directory"});
}

TEST(WriteOutputFile, ALinkIsFollowedAndKept) {
  TempDir t;
  fs::create_directories(t / "real");
  std::ofstream(t / "real" / "old.svg") << "old";
  fs::create_symlink("real/old.svg", t / "link.svg");
  fs::create_symlink("link.svg", t / "link2.svg");  // a chain
  write_output_file(t / "link2.svg", "new");
  EXPECT_TRUE(fs::is_symlink(t / "link.svg"));
  EXPECT_TRUE(fs::is_symlink(t / "link2.svg"));
  EXPECT_EQ(read_bytes(t / "real" / "old.svg"), "new");
  EXPECT_EQ(entries(t / "real"), 1u);
  // A dangling link: the file it names is created, as `> link` would.
  fs::create_symlink("real/fresh.svg", t / "dangling.svg");
  write_output_file(t / "dangling.svg", "fresh");
  EXPECT_TRUE(fs::is_symlink(t / "dangling.svg"));
  EXPECT_EQ(read_bytes(t / "real" / "fresh.svg"), "fresh");
  // A loop of links is an error, not a hang.
  fs::create_symlink("b", t / "a");
  fs::create_symlink("a", t / "b");
  expect_message(error_of([&] { write_output_file(t / "a", "x"); }), {(t / "a").string()});
}

TEST(WriteOutputFile, DevicesAndFifosAreWrittenThroughNeverReplaced) {
  write_output_file("/dev/null", "<svg/>");
  EXPECT_FALSE(fs::is_regular_file("/dev/null"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  if (fs::exists("/dev/full")) {
    expect_message(error_of([] { write_output_file("/dev/full", "<svg/>"); }),
                   {"cannot write /dev/full", "No space left on device"});
    EXPECT_TRUE(fs::is_character_file("/dev/full"));
  }
  TempDir t;
  fs::create_symlink("/dev/null", t / "null.svg");
  write_output_file(t / "null.svg", "x");
  EXPECT_TRUE(fs::is_symlink(t / "null.svg"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));

  const fs::path fifo = t / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = read_bytes(fifo); });
  write_output_file(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(got, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(WriteOutputFile, ADirectoryIsRefused) {
  TempDir t;
  expect_message(error_of([&] { write_output_file(t.path(), "x"); }), {t.path().string(), "is a directory"});
  EXPECT_TRUE(fs::is_directory(t.path()));
  EXPECT_EQ(entries(t.path()), 0u);
}

TEST(ReadFileLimited, StopsAtTheLimitWhateverItReads) {
  TempDir t;
  std::ofstream(t / "small") << "abc";
  EXPECT_EQ(core::read_file_limited((t / "small").string(), 3, "a test file"), "abc");
  expect_message(error_of([&] { core::read_file_limited((t / "small").string(), 2, "a test file"); }),
                 {(t / "small").string(), "more than 2 bytes", "the limit of a test file"});
  // /dev/zero has size 0 and never ends: reading stops one block past the limit.
  expect_message(error_of([] { core::read_file_limited("/dev/zero", uint64_t{1} << 20, "a test file"); }),
                 {"/dev/zero: more than 1 MiB"});
  expect_message(error_of([&] { core::read_file_limited(t.path().string(), 10, "a test file"); }),
                 {t.path().string(), "Is a directory"});
  expect_message(error_of([&] { core::read_file_limited((t / "none").string(), 10, "a test file"); }),
                 {(t / "none").string(), "cannot open"});
}

TEST(ModelDirectoryFiles, ConfigsAndTrainerStateAreBounded) {
  TempDir t;
  fs::create_symlink("/dev/zero", t / "config.yaml");
  expect_message(error_of([&] { load_yaml_file(t / "config.yaml"); }),
                 {(t / "config.yaml").string(), "more than 16 MiB", "YAML config file"});
  expect_message(error_of([&] { read_checkpoint_info(t.path()); }), {"config.yaml", "more than 16 MiB"});
}

TEST(ModelDirectoryFiles, ASecondYamlDocumentIsAnError) {
  TempDir t;
  std::ofstream(t / "c.yaml") << "a: 1\n---\nb: 2\n";
  expect_message(error_of([&] { load_yaml_file(t / "c.yaml"); }),
                 {(t / "c.yaml").string(), "2 YAML documents", "second at line 3"});
  expect_message(error_of([] { parse_yaml("a: 1\n--- \n", "text"); }), {"text: 2 YAML documents"});
  // One document with its markers is one document.
  EXPECT_EQ(parse_yaml("---\na: 1\n...\n", "text")["a"].as<int>(), 1);
  EXPECT_TRUE(parse_yaml("", "text").IsNull());
}

TEST(ModelDirectoryFiles, CopyIsBounded) {
  TempDir t;
  fs::create_symlink("/dev/zero", t / "vocab.txt");
  expect_message(error_of([&] { copy_file_atomic(t / "vocab.txt", t / "copy.txt", 1 << 20, "a vocabulary file"); }),
                 {"vocab.txt: more than 1 MiB (the limit of a vocabulary file"});
  EXPECT_FALSE(fs::exists(t / "copy.txt"));
}

}  // namespace
}  // namespace engram::io
