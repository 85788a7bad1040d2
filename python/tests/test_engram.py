"""The engram Python package (docs/python.md) against the CLI: every golden model
(tests/golden/models/<family>/, whose cases.tsv is the CLI's own output of `engram run`) gives the
same answers from Python; the arrays' shapes and dtypes; options and errors; the GIL released
while decoding; a short training run, stopped and resumed; the metrics equal to the CLI's."""

import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import engram

SOURCE = os.environ.get("ENGRAM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("ENGRAM_BIN", os.path.join(SOURCE, "build", "engram"))
GOLDEN = os.path.join(SOURCE, "tests", "golden", "models")


def golden(family):
    return os.path.join(GOLDEN, family)


def cases(family):
    with open(os.path.join(golden(family), "cases.tsv"), encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]


def cli(*args, stdin=""):
    return subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True, check=True).stdout


def test_a_models_decode_defaults_lie_under_the_keywords(tmp_path):
    # A run directory whose decode: section (RUN/decode.yaml) asks for beam 3 and alpha 0.6.
    shutil.copytree(golden("seq2seq"), tmp_path / "best")
    (tmp_path / "train.yaml").write_text("")
    (tmp_path / "decode.yaml").write_text("beam: 3\nalpha: 0.6\n")
    m, plain = engram.load(tmp_path), engram.load(golden("seq2seq"))
    assert m.defaults["beam"] == 3 and m.defaults["alpha"] == pytest.approx(0.6) and plain.defaults["alpha"] == 0
    src = cases("seq2seq")[0][0]
    as_given = plain.translate_batch([src], beam=3, alpha=0.6)[0][0]
    assert m.translate_batch([src])[0][0]["score"] == pytest.approx(as_given["score"])
    assert as_given["score"] != pytest.approx(plain.translate_batch([src], beam=3)[0][0]["score"])
    assert m.translate_batch([src], alpha=0)[0][0]["score"] == pytest.approx(
        plain.translate_batch([src], beam=3)[0][0]["score"]), "an explicit keyword overrides the model's default"
    (tmp_path / "decode.yaml").write_text("alfa: 0.6\n")
    with pytest.raises(engram.Error, match="unknown config key 'decode.alfa'"):
        engram.load(tmp_path)


def test_seq2seq_translates_as_the_cli_with_alpha_arrays():
    m = engram.load(golden("seq2seq"))
    assert m.family == "seq2seq" and "beam" in m.options and m.defaults["beam"] == 1
    srcs = [s for s, _ in cases("seq2seq")]
    want = cli("translate", "-m", golden("seq2seq"), stdin="\n".join(srcs) + "\n").splitlines()
    assert [m.translate(s) for s in srcs] == want == [t for _, t in cases("seq2seq")]
    out = m.translate_batch(srcs[:2], beam=3, n_best=2, return_attention=True)
    assert len(out) == 2 and len(out[0]) == 2
    h = out[0][0]
    a = h["attention"]
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    assert a.shape == (len(h["tgt_tokens"]), len(h["src_tokens"]))
    np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-4)
    assert out[0][0]["score"] >= out[0][1]["score"]
    # beam 3 equals the CLI's beam 3
    assert out[0][0]["tgt"] == cli("translate", "-m", golden("seq2seq"), "--beam", "3", stdin=srcs[0] + "\n").strip()
    # batch: sentences decoded together, as the CLI's --batch (same translations, range checked)
    assert [h[0]["tgt"] for h in m.translate_batch(srcs, batch=2)] == want
    with pytest.raises(engram.Error, match="batch 0 must be in"):
        m.translate_batch(srcs, batch=0)
    # a target prefix is forced first
    forced = m.translate_batch([srcs[0]], target_prefix=["2027"])[0][0]["tgt"]
    assert forced.startswith("2027")


def test_every_golden_family_answers_as_the_cli():
    mem = engram.load(golden("memn2n"))
    for line, want in cases("memn2n"):
        parts = [p.strip() + "." for p in line.split(".") if p.strip()]
        question = parts[-1][:-1]  # "Where is Mary?"
        r = mem.answer(parts[:-1], question)
        assert r["answer"] == want
        assert r["hops"].shape[1] == len(parts) - 1 and r["hops"].dtype == np.float32
    ptr = engram.load(golden("pointer"))
    for line, want in cases("pointer"):
        line = line.split(" output")[0]  # the paper's line format: the points, then "output ..."
        r = ptr.solve([float(x) for x in line.split()])
        assert (r["output"] + 1).tolist() == [int(x) for x in want.split()]
        # one row per output step (the end step last, where the model has one), one column per point
        assert r["attention"].shape[1] == len(line.split())
        assert r["attention"].shape[0] in (len(r["output"]), len(r["output"]) + 1)
    tree = engram.load(golden("tree"))
    for line, want in cases("tree"):
        r = tree.sentiment(line)
        assert f'{r["label"]} {r["name"]}' == " ".join(want.split()[:2])
    pg = engram.load(golden("pointer_generator"))
    for line, want in cases("pointer_generator"):
        r = pg.summarize(line)
        assert r["summary"] == want
    r = pg.summarize(cases("pointer_generator")[0][0])
    assert all(isinstance(t["attention"], np.ndarray) and t["attention"].shape == (len(r["source_tokens"]),)
               for t in r["tokens"])
    ntm = engram.load(golden("ntm"))
    for line, want in cases("ntm"):
        parts = [int(x) for x in line.split()]  # length [repeat [seed]], as `engram run` reads them
        fields = dict(zip(["length", "repeat", "seed"], parts))
        r = ntm.run(**fields)
        rows = [t for t in range(len(r["scored"])) if r["scored"][t] > 0]
        bits = lambda a: " ".join("".join(str(int(b > 0.5)) for b in a[t]) for t in rows)
        target, output = (p.split(" ", 1)[1] for p in want.split(" | ")[:2])
        assert bits(r["target"]) == target and bits(r["output"]) == output, line
        assert r["read_weightings"].ndim == 3 and r["output"].dtype == np.float32


def test_options_and_errors():
    m = engram.load(golden("seq2seq"))
    with pytest.raises(TypeError, match="'beem' is not an input or an option of the seq2seq family"):
        m.run(src=["x"], beem=2)
    with pytest.raises(engram.Error, match="beam 0 must be in"):
        m.translate_batch(["29 November 2026"], beam=0)
    with pytest.raises(engram.Error, match="'beam' must be an integer"):
        m.run(src=["x"], beam="two")
    with pytest.raises(engram.Error, match="not from a beam"):
        m.run(src=["x"], stream=True, beam=2)
    with pytest.raises(engram.Error, match="input 2 is empty, so its target prefix"):
        m.translate_batch(["29 November 2026", ""], target_prefix=["2027", "2027"])
    assert issubclass(engram.Error, ValueError)
    with pytest.raises(engram.Error):
        engram.load(os.path.join(SOURCE, "no", "such", "model"))
    with pytest.raises(engram.Error, match="precision"):
        engram.load(golden("seq2seq"), precision="fp64")
    with pytest.raises(TypeError, match="translate_batch is for seq2seq models"):
        engram.load(golden("tree")).translate_batch(["x"])
    # JSON has no NaN: named before the body is written, not a parser's error about a literal
    with pytest.raises(engram.Error, match="'alpha' holds NaN or an infinity"):
        m.run(src=["x"], alpha=float("inf"))
    with pytest.raises(TypeError, match="'src': Object of type bytes"):
        m.run(src=b"x")
    # batch is compared as given, not as the int it would wrap to
    with pytest.raises(engram.Error, match=r"batch 2147483648 must be in \[1, "):
        m.translate_batch(["29 November 2026"], batch=2**31)
    with pytest.raises(engram.Error, match=r"batch 9223372036854775808 must be in \[1, "):
        m.translate_batch(["29 November 2026"], batch=2**63)
    # the precision is the load's, not a keyword of run()
    assert "precision" not in m.options and "precision" not in m.defaults and m.precision == "fp32"
    with pytest.raises(TypeError, match="chosen when the model is loaded"):
        m.run(src=["x"], precision="bf16")
    assert engram.load(golden("seq2seq"), precision="bf16").precision == "bf16"
    ptr = engram.load(golden("pointer"))
    with pytest.raises(engram.Error, match="'points' holds NaN or an infinity"):
        ptr.solve([float("nan"), 0.5])
    with pytest.raises(engram.Error):
        ptr.solve([[0.1, 0.2, 0.3], [0.4]])  # ragged
    sp = None  # speech has no golden model: the waveform check runs before any model is needed
    with pytest.raises(engram.Error, match="one channel"):
        engram._wav_bytes(np.zeros((2, 10)), 8000)
    with pytest.raises(engram.Error, match="NaN"):
        engram._wav_bytes(np.array([0.0, np.nan]), 8000)
    assert sp is None


def test_the_models_own_precision_unless_one_is_given(tmp_path):
    # A run's decode: section may set the precision; engram.load takes it, as the CLI does
    # without --precision, and a precision given wins.
    d = tmp_path / "m"
    shutil.copytree(golden("seq2seq"), d)
    (d / "decode.yaml").write_text("precision: bf16\n")
    assert engram.load(d).precision == "bf16"
    assert engram.load(d, precision="fp32").precision == "fp32"
    # the scores say which weights decoded: bf16's differs from fp32's, and Python's equals the CLI's
    src = cases("seq2seq")[0][0]
    score = lambda *flags: float(cli("translate", "-m", str(d), "--scores", *flags, stdin=src + "\n").split("|||")[2])
    assert score() == score("--precision", "bf16") != score("--precision", "fp32")
    assert round(engram.load(d).translate_batch([src])[0][0]["score"], 4) == score()


def test_shortlist(tmp_path):
    """shortlist=True decodes over the model's shortlist.tsv (engram shortlist): one that leaves out
    the first output's first character never emits it; a model without one says so."""
    src, want = next(iter(cases("seq2seq")))
    with pytest.raises(engram.Error, match="no shortlist.tsv"):
        engram.load(golden("seq2seq")).translate(src, shortlist=True)
    model = tmp_path / "s2s"
    shutil.copytree(golden("seq2seq"), model)
    vocab = [line.rstrip("\n").split("\t")[0] for line in open(model / "tgt.vocab.txt", encoding="utf-8")][4:]
    (model / "shortlist.tsv").write_text("engram-shortlist 1\n*\t" + " ".join(t for t in vocab if t != want[0]) + "\n",
                                         encoding="utf-8")
    m = engram.load(str(model))
    assert m.translate(src) == want
    got = m.translate(src, shortlist=True)
    assert got != want and want[0] not in got


def test_the_gil_is_released_while_decoding():
    m = engram.load(golden("seq2seq"))
    srcs = [s for s, _ in cases("seq2seq")] * 200
    done = threading.Event()
    ticks = 0

    def decode():
        m.translate_batch(srcs, beam=4)
        done.set()

    t = threading.Thread(target=decode)
    start = time.monotonic()
    t.start()
    while not done.is_set():  # Python runs here only while the decode has let go of the GIL
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.monotonic() - start
    assert elapsed > 0.05, "the decode was too short to tell"
    assert ticks > 10, f"the main thread ran {ticks} times in {elapsed:.2f} s of decoding"


def test_train_reports_progress_stops_on_request_and_resumes(tmp_path):
    run_dir = str(tmp_path / "run")
    events = []

    def stop_after(first):
        def on_progress(e):
            events.append(e)
            if e.get("event") == "train" and e.get("step", 0) >= first:
                engram.request_stop()  # what Ctrl-C does
        return on_progress

    limit = 5000  # far more updates than the test waits for: only the stop ends the runs
    overrides = {"train.max_steps": limit, "train.run_dir": run_dir, "train.log_every": 5, "train.valid_every": 0,
                 "data.generate_train": 2000, "data.generate_valid": 50, "data.bleu_sentences": 1,
                 "train.max_minutes": 0, "train.max_epochs": 1000}
    config = os.path.join(SOURCE, "configs", "dates.yaml")
    out = engram.train(config, overrides, on_progress=stop_after(10), poll_seconds=0.02)
    assert out == run_dir
    steps = [e["step"] for e in events if e.get("event") == "train"]
    assert steps and steps[0] == 5 and 10 <= steps[-1] < limit, steps
    assert os.path.isdir(os.path.join(run_dir, "last"))
    stopped = steps[-1]
    # Resumed: the run goes on from its last checkpoint (saved at the stop), then stops again.
    events.clear()
    engram.train(config, overrides, on_progress=stop_after(stopped + 10), poll_seconds=0.02)
    steps = [e["step"] for e in events if e.get("event") == "train"]
    assert steps and steps[0] > stopped and steps[-1] < limit, (stopped, steps)
    m = engram.load(run_dir)
    assert isinstance(m.translate("29 November 2026"), str)


def test_metrics_equal_the_cli():
    g = os.path.join(SOURCE, "tests", "golden", "sacrebleu")
    hyps = open(os.path.join(g, "readme.hyp"), encoding="utf-8").read().splitlines()
    refs = [open(os.path.join(g, f), encoding="utf-8").read().splitlines()
            for f in sorted(os.listdir(g)) if f.startswith("readme.ref")]
    ref_files = [os.path.join(g, f) for f in sorted(os.listdir(g)) if f.startswith("readme.ref")]
    b = engram.bleu(hyps, refs)
    assert f"{b['score']:.4f}" == cli("eval", "bleu", os.path.join(g, "readme.hyp"), *ref_files, "-b", "-w", "4").strip()
    c = engram.chrf(hyps, refs)
    assert c["name"] == "chrF2"
    assert f"{c['score']:.4f}" == cli("eval", "chrf", os.path.join(g, "readme.hyp"), *ref_files, "-b", "-w", "4").strip()
    rg = os.path.join(SOURCE, "tests", "golden", "rouge_score")
    read = lambda f: open(os.path.join(rg, f), encoding="utf-8").read().splitlines()
    got = engram.rouge(read("prediction.txt"), read("target.txt"), use_stemmer=True)
    want = json.loads(cli("rouge", os.path.join(rg, "prediction.txt"), os.path.join(rg, "target.txt"), "--stem",
                          "--json", "-w", "6"))
    for ours, theirs in [("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2"), ("rougeL", "ROUGE-L")]:
        assert got[ours]["f1"] * 100 == pytest.approx(want[theirs]["f1"], abs=1e-5), ours
    r = engram.rouge(["the cat sat"], ["the cat sat down"])
    assert r["rouge1"]["precision"] == pytest.approx(1.0) and r["rouge1"]["recall"] == pytest.approx(0.75)


def test_ctrl_c_stops_training_after_the_update_and_the_run_resumes(tmp_path):
    """SIGINT in a real process: KeyboardInterrupt reaches the caller once the run has stopped
    and saved last/ (the trainer's own thread finishes its update first)."""
    import signal
    run_dir = str(tmp_path / "run")
    code = (
        "import sys, engram\n"
        "try:\n"
        "    engram.train(sys.argv[1], {'train.max_steps': 100000, 'train.run_dir': sys.argv[2], 'train.log_every': 5,\n"
        "                  'train.valid_every': 0, 'data.generate_train': 2000, 'data.generate_valid': 50,\n"
        "                  'data.bleu_sentences': 1, 'train.max_minutes': 0, 'train.max_epochs': 10000},\n"
        "                 on_progress=lambda e: print('event', e.get('step'), flush=True), poll_seconds=0.02)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(3)\n")
    p = subprocess.Popen([sys.executable, "-c", code, os.path.join(SOURCE, "configs", "dates.yaml"), run_dir],
                         stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    for line in p.stdout:
        if line.startswith("event"):
            break
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 3 and "interrupted" in out, (p.returncode, out)
    assert os.path.isdir(os.path.join(run_dir, "last"))


def test_transcribe_a_path_bytes_and_a_waveform_as_the_cli():
    """speech: the web test's small untrained model (tests/web/models/speech; there is no golden
    speech model) on a golden recording: a path, its bytes and its samples as a numpy waveform
    give what `engram speech transcribe` gives, with the pictures' arrays."""
    import wave
    model = os.path.join(SOURCE, "tests", "web", "models", "speech")
    wav = os.path.join(SOURCE, "tests", "golden", "audio", "synth8k.wav")
    want = cli("speech", "transcribe", "-m", model, wav).split("\t")[1].strip()
    m = engram.load(model)
    r = m.transcribe(wav)
    assert r["text"] == want
    assert r["spectrogram"].ndim == 2 and r["attention"].shape[0] >= len(r["digits"])
    assert m.transcribe(open(wav, "rb").read())["text"] == want
    with wave.open(wav) as w:
        rate, pcm = w.getframerate(), np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    assert m.transcribe(pcm, sample_rate=rate)["text"] == want
    assert m.transcribe(pcm.astype(np.float32) / 32767.0, sample_rate=rate)["text"] == want
    with pytest.raises(engram.Error, match="Hz"):
        m.transcribe(pcm, sample_rate=rate * 2)
    with pytest.raises(TypeError, match="sample_rate"):
        m.transcribe(pcm)
