// The list of subcommands.
#include "engram/cli/commands.h"

namespace engram::cli {

void register_commands(CLI::App& app) {
  register_demo(app);
  register_eval(app);
  register_rouge(app);
  register_plot(app);
  register_babi(app);
  register_seq2seq(app);
  register_ntm(app);
  register_sentiment(app);
  register_pointer(app);
  register_speech(app);
  register_pointer_generator(app);
  register_serve(app);
  register_infer(app);
}

}  // namespace engram::cli
