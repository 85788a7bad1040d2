// Registration of every `engram` subcommand (one function per command file).
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace engram::cli {

void register_commands(CLI::App& app);
void register_demo(CLI::App& app);
void register_eval(CLI::App& app);
void register_rouge(CLI::App& app);   // rouge HYP REF (cli/rouge.cc)
void register_plot(CLI::App& app);
void register_babi(CLI::App& app);
void register_seq2seq(CLI::App& app);  // train, translate, attention (cli/train.cc)
void register_ntm(CLI::App& app);      // ntm eval|show (cli/ntm.cc)
void register_sentiment(CLI::App& app);  // sentiment eval|show (cli/sentiment.cc)
void register_pointer(CLI::App& app);  // pointer eval|show (cli/pointer.cc)
void register_speech(CLI::App& app);   // speech transcribe (cli/speech.cc)
void register_pointer_generator(CLI::App& app);  // summarize, pointer-generator eval|show
void register_serve(CLI::App& app);    // serve (cli/serve.cc)
void register_infer(CLI::App& app);    // run, average (cli/infer.cc)
// argv with `eval` / `show` replaced by the verb of the -m model's family where argv[1] is one of
// them and -m / --model is given (cli/family_verbs.cc); else argv as it is.
std::vector<std::string> with_family_verb(int argc, char** argv);

}  // namespace engram::cli
