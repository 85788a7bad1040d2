// engram._engram: the Python face of the inference contract (models/inference.h), one thin layer
// for every family. A loaded model takes one request body (the route's JSON: the family's input
// fields and decode options), parses it once, runs it and returns the reply as JSON text, with
// the GIL released while it decodes; engram/__init__.py turns replies into Python objects with
// numpy arrays and adds the per-family conveniences. Errors are engram.Error (a ValueError)
// with the message the CLI and the server give.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engram/core/error.h"
#include "engram/core/kernels/blas.h"
#include "engram/decode/options.h"
#include "engram/eval/bleu.h"
#include "engram/eval/chrf.h"
#include "engram/eval/rouge.h"
#include "engram/io/config.h"
#include "engram/models/registry.h"
#include "engram/train/trainer.h"

namespace py = pybind11;
using nlohmann::json;

namespace {

using namespace engram;

// The caps of a request from Python: the library's own limits (decode/options.h, search.h), not
// a server's (a Python caller decodes its own inputs).
models::ServeLimits python_limits() {
  models::ServeLimits l;
  l.max_items = 1 << 16;
  l.max_tokens = static_cast<int>(decode::kMaxOutputTokens);
  l.max_beam = decode::kMaxBeam;
  l.max_n_best = decode::kMaxBeam;
  l.max_length = decode::kMaxOutputTokens;
  return l;
}

// Writes the honoured fields of a DecodeOptions into a JSON object (enums by name).
struct OptionsJson {
  json& out;
  const decode::OptionSet& set;
  template <class T>
  void operator()(const char* name, T& v, const char* = "") {
    if (!set.has(name)) return;
    if constexpr (io::detail::NamedEnum<T>) {
      for (const auto& [value, n] : io::EnumNames<T>::items)
        if (value == v) out[name] = n;
    } else {
      out[name] = v;
    }
  }
};

decode::Precision precision_named(const std::string& name) {
  for (const auto& [value, n] : io::EnumNames<decode::Precision>::items)
    if (name == n) return value;
  throw Error(fmt::format("precision '{}' must be one of {}", name, io::detail::enum_choices<decode::Precision>()));
}

// One loaded model directory (models::load_model): its family's request fields and one run.
class Model {
 public:
  // `precision` empty: the model's own (its run's decode: section), else fp32, as the CLI without
  // --precision.
  Model(const std::string& dir, const std::string& precision, int threads) : threads_(threads) {
    ENGRAM_CHECK(threads >= 1 && threads <= 256, "threads {} must be in [1, 256]", threads);
    const std::optional<decode::Precision> given =
        precision.empty() ? std::nullopt : std::optional(precision_named(precision));
    model_ = models::load_model(dir);
    precision_ = given ? *given : model_->own_precision();
    model_->set_precision(precision_);
  }
  std::string precision() const { return std::string(decode::precision_name(precision_)); }
  std::string family() const { return model_->family(); }
  std::string dir() const { return model_->dir().string(); }
  std::vector<std::string> inputs() const { return model_->inference().inputs; }
  std::vector<std::string> options() const { return model_->inference().options.fields; }
  // The default of each honoured option, as JSON text ({"beam": 1, ...}): the model's own
  // (its run's decode: section) over the family's.
  std::string defaults() const {
    json out = json::object();
    decode::DecodeOptions d = model_->decode_options(model_->inference().options.defaults, {});
    OptionsJson visitor{out, model_->inference().options};
    d.visit(visitor);
    return out.dump();
  }

  // One request body (JSON text) -> the reply (JSON text). Parsed and run with the GIL released,
  // so other Python threads run meanwhile (two threads decode on two cores).
  std::string run(const std::string& body) const {
    py::gil_scoped_release release;
    core::kernels::set_blas_threads(threads_);
    json request = json::parse(body);
    // "batch" is the server's own option over HTTP; here it is the caller's: inputs decoded
    // together (DecodeOptions::chunk), checked as the CLI's --batch.
    int batch = 0;
    if (request.is_object() && request.contains("batch")) {
      const json& b = request["batch"];
      ENGRAM_CHECK(b.is_number_integer(), "'batch' must be an integer");
      // Compared as the number given (unsigned past 2^63), never as an int it would wrap to.
      const auto limit = static_cast<uint64_t>(decode::kMaxBatch);
      const bool in_range = b.is_number_unsigned() ? b.get<uint64_t>() >= 1 && b.get<uint64_t>() <= limit
                                                   : b.get<int64_t>() >= 1 && b.get<int64_t>() <= decode::kMaxBatch;
      ENGRAM_CHECK(in_range, "batch {} must be in [1, {}]", b.dump(), decode::kMaxBatch);
      batch = b.get<int>();
      request.erase("batch");
    }
    std::unique_ptr<models::Request> r = model_->request(request, python_limits());
    if (batch > 0) {
      r->options.batch = batch;
      r->options.chunk = batch;
    }
    const models::Request* one[1] = {r.get()};
    return model_->run_requests(one)[0].dump(-1, ' ', false, json::error_handler_t::replace);
  }

 private:
  std::unique_ptr<models::LoadedModel> model_;
  decode::Precision precision_ = decode::Precision::kFp32;
  int threads_;
};

// A training run on a thread of its own (so Python's main thread stays free to take Ctrl-C):
// the family's train entry (models::Family::train) on the config and overrides.
class TrainJob {
 public:
  TrainJob(const std::string& config, const std::vector<std::string>& overrides, int threads) {
    ENGRAM_CHECK(threads >= 1 && threads <= 256, "threads {} must be in [1, 256]", threads);
    const models::RunConfigFile run = models::read_run_config(config);
    std::vector<std::string> sets = overrides;
    if (!run.run_dir.empty()) sets.push_back("train.run_dir=" + run.run_dir);
    // The effective config names the run directory (train.run_dir), after the recipe and overrides.
    const YAML::Node effective = YAML::Load(models::effective_run_config(run, sets));
    run_dir_ = effective["train"] && effective["train"]["run_dir"] ? effective["train"]["run_dir"].as<std::string>() : "";
    train::clear_stop_request();
    thread_ = std::thread([this, run, sets, threads] {
      std::string summary, error;
      try {
        core::kernels::set_blas_threads(threads);
        summary = models::train_run(run, sets);
      } catch (const std::exception& e) {
        error = e.what();
      }
      const std::lock_guard<std::mutex> lock(mu_);
      summary_ = summary;
      error_ = error;
      done_ = true;
      cv_.notify_all();
    });
  }
  ~TrainJob() {
    if (thread_.joinable()) {
      train::request_stop();
      py::gil_scoped_release release;
      thread_.join();
    }
  }
  const std::string& run_dir() const { return run_dir_; }
  // Waits up to `seconds` (negative: until it ends) with the GIL released; true when it ended.
  bool wait(double seconds) {
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(mu_);
    if (seconds < 0) cv_.wait(lock, [&] { return done_; });
    else cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return done_; });
    return done_;
  }
  // The run's one-line summary once it ended; engram.Error with its message when it failed.
  std::string result() {
    wait(-1);
    {
      py::gil_scoped_release release;
      if (thread_.joinable()) thread_.join();
    }
    ENGRAM_CHECK(error_.empty(), "{}", error_);
    return summary_;
  }

 private:
  std::string run_dir_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string summary_, error_;
};

eval::BleuOptions bleu_options(const std::string& tokenize, bool lowercase) {
  eval::BleuOptions o;
  ENGRAM_CHECK(tokenize == "13a" || tokenize == "none", "bleu: tokenize '{}' must be 13a or none", tokenize);
  o.tokenize = tokenize == "13a" ? eval::BleuTokenizer::k13a : eval::BleuTokenizer::kNone;
  o.lowercase = lowercase;
  return o;
}

}  // namespace

PYBIND11_MODULE(_engram, m) {
  m.doc() = "engram's C++ core: load, run and train every family (see the engram package)";
  static py::exception<engram::Error> error(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const engram::Error& e) {
      error(e.what());
    } catch (const json::exception& e) {  // a body that is not JSON: the caller's input
      error(e.what());
    } catch (const YAML::Exception& e) {
      error(e.what());
    }
  });

  py::class_<Model>(m, "Model")
      .def(py::init<const std::string&, const std::string&, int>(), py::arg("dir"), py::arg("precision") = "",
           py::arg("threads") = 1)
      .def_property_readonly("family", &Model::family)
      .def_property_readonly("dir", &Model::dir)
      .def_property_readonly("inputs", &Model::inputs)
      .def_property_readonly("options", &Model::options)
      .def_property_readonly("precision", &Model::precision)
      .def("defaults", &Model::defaults)
      .def("run", &Model::run, py::arg("body"));

  py::class_<TrainJob>(m, "TrainJob")
      .def(py::init<const std::string&, const std::vector<std::string>&, int>(), py::arg("config"),
           py::arg("overrides"), py::arg("threads") = 1)
      .def_property_readonly("run_dir", &TrainJob::run_dir)
      .def("wait", &TrainJob::wait, py::arg("seconds"))
      .def("result", &TrainJob::result);
  m.def("request_stop", &engram::train::request_stop,
        "stop every training run of this process after its current update (saved, resumable)");

  m.def("option_names", &engram::decode::option_names, "every field of the decode-options schema");

  m.def(
      "bleu",
      [](const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs,
         const std::string& tokenize, bool lowercase) {
        const engram::eval::BleuScore s = engram::eval::corpus_bleu(hyps, refs, bleu_options(tokenize, lowercase));
        py::dict d;
        d["score"] = s.score, d["counts"] = s.counts, d["totals"] = s.totals, d["precisions"] = s.precisions;
        d["bp"] = s.bp, d["sys_len"] = s.sys_len, d["ref_len"] = s.ref_len, d["signature"] = s.signature;
        return d;
      },
      py::arg("hyps"), py::arg("refs"), py::arg("tokenize") = "13a", py::arg("lowercase") = false);
  m.def(
      "chrf",
      [](const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs, int word_order) {
        engram::eval::ChrfOptions o;
        ENGRAM_CHECK(word_order >= 0 && word_order <= 6, "chrf: word_order {} must be in [0, 6]", word_order);
        o.word_order = word_order;
        const engram::eval::ChrfScore s = engram::eval::corpus_chrf(hyps, refs, o);
        py::dict d;
        d["score"] = s.score, d["name"] = s.name, d["signature"] = s.signature;
        return d;
      },
      py::arg("hyps"), py::arg("refs"), py::arg("word_order") = 0);
  m.def(
      "rouge",
      [](const std::vector<std::string>& hyps, const std::vector<std::string>& refs, bool use_stemmer) {
        const engram::eval::RougeResult r = engram::eval::corpus_rouge(hyps, refs, {.use_stemmer = use_stemmer});
        auto one = [](const engram::eval::RougeScore& s) {
          py::dict d;
          d["precision"] = s.precision, d["recall"] = s.recall, d["f1"] = s.f1;
          return d;
        };
        py::dict d;
        d["rouge1"] = one(r.rouge1), d["rouge2"] = one(r.rouge2), d["rougeL"] = one(r.rouge_l);
        d["rougeLsum"] = one(r.rouge_lsum);
        return d;
      },
      py::arg("hyps"), py::arg("refs"), py::arg("use_stemmer") = false);
}
