// `engram` subcommand dispatch. Each subcommand lives in its own file as a thin adapter.
// One error style and three exit codes (docs/limits.md):
//   0  success (also --help and --version)
//   1  `engram: error: ...`: bad input, a failed check, a failed write (standard output included)
//   2  `engram: error: ...`: the command line itself (unknown option, bad or missing value)
#include "engram/cli/cli.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engram/cli/commands.h"
#include "engram/core/error.h"
#include "engram/core/printable.h"

namespace engram::cli {

namespace {

// Prints the one error line: "engram: error: MESSAGE[SUFFIX]" with MESSAGE made printable.
void print_error(std::string_view message, const char* suffix = "") {
  std::fprintf(stderr, "engram: error: %s%s\n", core::printable(message).c_str(), suffix);
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

// The one line of an allocation that failed (exit 1); what was written to standard output stays.
int out_of_memory() {
  std::fflush(stdout);
  print_error("out of memory: a size in the config, the options or the input asks for more memory than this machine "
              "can give");
  return 1;
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
    std::vector<std::string> args = with_family_verb(argc, argv);
    app.name(args.at(0));
    args.erase(args.begin());
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
    app.parse(args);
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
  } catch (const std::bad_alloc&) {  // an allocation the machine cannot give: say so, not "std::bad_alloc"
    return out_of_memory();
  } catch (const std::length_error&) {  // a vector or string longer than it can be: the same
    return out_of_memory();
  } catch (const std::exception& e) {  // engram::Error and the rest: one line, exit 1
    std::fflush(stdout);                  // what was written stays written; the error says why it stopped
    print_error(e.what());
    return 1;
  }
  return stdout_ok() ? 0 : 1;
}

}  // namespace engram::cli
