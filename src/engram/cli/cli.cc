// `engram` subcommand dispatch. Each subcommand lives in its own file as a thin adapter.
// One error style and three exit codes (docs/limits.md):
//   0  success (also --help and --version)
//   1  `engram: error: ...`: bad input, a failed check, a failed write (standard output included)
//   2  `engram: error: ...`: the command line itself (unknown option, bad or missing value)
#include "engram/cli/cli.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "engram/cli/commands.h"
#include "engram/core/error.h"

namespace engram::cli {

namespace {

// `text` made safe for one line of a terminal: control characters (newlines included), DEL and
// bytes that are not valid UTF-8 become \n, \t, \r or \xHH; valid UTF-8 (a Chinese file name)
// is kept as it is. A file name or token quoted into an error can then neither break the line
// nor send escape sequences to the terminal.
std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    size_t n = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
    if (n > 1) {  // a multi-byte sequence: whole, shortest form, a scalar value
      uint32_t cp = b & (0x7F >> n);
      for (size_t k = 1; k < n && n != 0; ++k) {
        const auto c = i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
        if ((c & 0xC0) != 0x80) n = 0;
        else cp = (cp << 6) | (c & 0x3F);
      }
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      if (n != 0 && (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp < 0xA0)))
        n = 0;  // overlong, out of range, a surrogate, or a C1 control
    }
    if (n == 1 && b >= 0x20 && b != 0x7F) {
      out += static_cast<char>(b);
    } else if (n > 1) {
      out.append(text.substr(i, n));
    } else {
      n = 1;
      out += b == '\n' ? "\\n" : b == '\t' ? "\\t" : b == '\r' ? "\\r" : fmt::format("\\x{:02X}", b);
    }
    i += n;
  }
  return out;
}

// Prints the one error line: "engram: error: MESSAGE[SUFFIX]" with MESSAGE made printable.
void print_error(std::string_view message, const char* suffix = "") {
  std::fprintf(stderr, "engram: error: %s%s\n", printable(message).c_str(), suffix);
}

// CLI11 2.1 reads an integer option with strtoll / strtoull and no overflow check: a number past
// 64 bits saturates silently and a negative one wraps in an unsigned option. Every option typed
// INT or UINT (its vector elements included) gets this check of its decimal text first.
void check_integer_options(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    const std::string full = opt->get_type_name();  // "INT", "INT:NONNEGATIVE", "UINT:INT in [1 - 64]", ...
    const std::string type = full.substr(0, full.find_first_of(": "));
    const bool is_uint = type == "UINT";
    if (type != "INT" && !is_uint) continue;
    opt->check(CLI::Validator(
        [is_uint](std::string& text) -> std::string {
          std::string_view s = text;
          const bool negative = !s.empty() && s.front() == '-';
          if (!s.empty() && (s.front() == '-' || s.front() == '+')) s.remove_prefix(1);
          if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) return "";  // CLI11's
          if (is_uint && negative) return fmt::format("{} is negative; this option takes a number >= 0", text);
          std::errc ec{};
          if (is_uint) {
            uint64_t v = 0;
            ec = std::from_chars(s.data(), s.data() + s.size(), v).ec;
          } else {
            int64_t v = 0;
            const std::string signed_text = negative ? "-" + std::string(s) : std::string(s);
            ec = std::from_chars(signed_text.data(), signed_text.data() + signed_text.size(), v).ec;
          }
          return ec == std::errc::result_out_of_range ? fmt::format("{} is beyond the 64-bit integer range", text) : "";
        },
        "", "integer range"));
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) check_integer_options(sub);
}

// Flushes standard output; a failure (a full disk, a closed pipe) is an error, never a silent loss.
bool stdout_ok() {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return true;
  std::fprintf(stderr, "engram: error: cannot write to standard output: %s\n", std::strerror(errno));
  return false;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"engram: attention and memory-augmented sequence models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "engram 0.1.0");
  app.option_defaults()->always_capture_default();  // every option's --help shows its default
  register_commands(app);
  check_integer_options(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {  // help and version go to standard output: checked too
    const int rc = app.exit(e);
    return stdout_ok() ? rc : 1;
  } catch (const CLI::CallForAllHelp& e) {
    const int rc = app.exit(e);
    return stdout_ok() ? rc : 1;
  } catch (const CLI::CallForVersion& e) {
    const int rc = app.exit(e);
    return stdout_ok() ? rc : 1;
  } catch (const CLI::ParseError& e) {
    print_error(e.what(), " (see engram --help, or engram COMMAND --help)");
    return 2;
  } catch (const std::exception& e) {  // engram::Error and the rest: one line, exit 1
    std::fflush(stdout);                  // what was written stays written; the error says why it stopped
    print_error(e.what());
    return 1;
  }
  return stdout_ok() ? 0 : 1;
}

}  // namespace engram::cli
