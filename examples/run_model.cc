// run_model MODEL_DIR: engram as a library. Loads any family's model directory (or run
// directory), prints its family to stderr, then answers each stdin line with one output line:
//   seq2seq  a source sentence          -> its translation
//   memn2n   "statements. question?"    -> the answer
//   ntm      "LENGTH [REPEAT [SEED]]"   -> the task's input and the model's output
// Build: examples/CMakeLists.txt (find_package(engram), link engram::engram).
#include <iostream>
#include <memory>
#include <string>

#include "engram/core/error.h"
#include "engram/models/registry.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: run_model MODEL_DIR < inputs\n";
    return 2;
  }
  try {
    std::unique_ptr<engram::models::LoadedModel> model = engram::models::load_model(argv[1]);
    std::cerr << "run_model: " << model->family() << " model from " << model->dir().string() << "; input: "
              << model->input_help() << "\n";
    for (std::string line; std::getline(std::cin, line);) std::cout << model->run_line(line) << std::endl;
  } catch (const engram::Error& e) {
    std::cerr << "run_model: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
