"""engram from Python: load, run, train and inspect every model family.

    import engram
    m = engram.load("runs/multi30k")                      # any family's model or run directory
    out = m.translate_batch(["Ein Hund rennt."], beam=5, return_attention=True)
    out[0][0]["tgt"], out[0][0]["attention"].shape        # α [T, S] as a numpy array

Every model has ``run(**fields)``: the request of its family's HTTP route (``docs/serve.md``) as
keyword arguments — its input fields and the decode options it honours (the one schema of
``decode/options.h``; ``m.options`` lists them, ``m.defaults`` gives their values: the model's
own, its run's ``decode:`` section, over the family's; a keyword given overrides them). A keyword
the family does not take is a TypeError naming it; a bad value is an ``engram.Error`` (a
ValueError) with the message the CLI gives. Results are plain dicts and lists; every numeric
array of them (α, hop attention, read / write weightings, p_gen, spectrograms) is a numpy array.
Decoding and training release the GIL.
"""

import base64
import io
import json
import os
import struct
import time

import numpy as np

from ._engram import Error, Model as _Model, TrainJob as _TrainJob, option_names, request_stop
from ._engram import bleu as _bleu, chrf as _chrf, rouge as _rouge

__all__ = ["Error", "Model", "load", "train", "bleu", "chrf", "rouge", "option_names"]

# Reply fields that are numeric but not pictures: they stay Python values.
_SCALAR_LISTS = {"story", "src_tokens", "tgt_tokens", "source_tokens", "tokens"}


def _numeric(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _to_numpy(v):
    """A list of numbers (or a rectangular list of such lists) -> a numpy array, else None."""
    if not isinstance(v, list) or not v:
        return None
    if all(_numeric(x) for x in v):
        dtype = np.float32 if any(isinstance(x, float) for x in v) else np.int64
        return np.asarray(v, dtype=dtype)
    if all(isinstance(x, list) for x in v):
        rows = [_to_numpy(x) if x else np.zeros(0, np.float32) for x in v]
        if all(r is not None for r in rows) and len({r.shape for r in rows}) == 1:
            return np.stack(rows).astype(np.float32 if any(r.dtype == np.float32 for r in rows) else np.int64)
    return None


def _convert(v, key=None):
    """A reply's JSON value as Python objects, numeric arrays as numpy arrays."""
    if isinstance(v, dict):
        return {k: _convert(x, k) for k, x in v.items()}
    if isinstance(v, list):
        if key not in _SCALAR_LISTS:
            arr = _to_numpy(v)
            if arr is not None:
                return arr
        return [_convert(x) for x in v]
    return v


def _name_the_field(body):
    """Raises the error of the first field of a request body that JSON cannot hold: a value of a
    type it has not (TypeError), or NaN / an infinity, which it has no number for (engram.Error)."""
    for k, v in body.items():
        try:
            json.dumps(v)  # NaN and infinities allowed: only the type can fail here
        except (TypeError, ValueError) as e:
            raise TypeError(f"{k!r}: {e}") from None
        try:
            json.dumps(v, allow_nan=False)
        except ValueError:
            raise Error(f"{k!r} holds NaN or an infinity; its numbers must be finite") from None


def _wav_bytes(waveform, sample_rate):
    """A mono float waveform in [-1, 1] as a 16-bit PCM WAV file (RIFF), in memory."""
    w = np.asarray(waveform)
    if w.ndim != 1:
        raise Error(f"transcribe: the waveform must be one channel (1-D), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise Error("transcribe: the waveform holds NaN or infinite samples")
    if w.dtype.kind == "f":
        pcm = np.clip(np.round(w * 32767.0), -32768, 32767).astype("<i2")
    elif w.dtype == np.int16:
        pcm = w.astype("<i2")
    else:
        raise Error(f"transcribe: the waveform must be float or int16, got {w.dtype}")
    data = pcm.tobytes()
    out = io.BytesIO()
    out.write(b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE")
    out.write(b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, int(sample_rate), int(sample_rate) * 2, 2, 16))
    out.write(b"data" + struct.pack("<I", len(data)) + data)
    return out.getvalue()


class Model:
    """A loaded model directory of any family (``engram.load``)."""

    def __init__(self, path, precision=None, threads=1):
        self._m = _Model(os.fspath(path), precision or "", threads)
        self.family = self._m.family
        self.dir = self._m.dir
        # the weights' precision, chosen here and only here: the one given, else the model's own
        # (its run's decode: section), else fp32
        self.precision = self._m.precision
        self.inputs = list(self._m.inputs)    # the family's input fields
        # the decode options it honours, as keywords of run(): all but the precision
        self.options = [o for o in self._m.options if o != "precision"]
        self.defaults = {k: v for k, v in json.loads(self._m.defaults()).items() if k != "precision"}

    def __repr__(self):
        return f"engram.Model(family={self.family!r}, dir={self.dir!r})"

    def run(self, **fields):
        """One request of the family's route (its input fields and options) -> its reply."""
        for k in fields:
            if k == "precision":
                raise TypeError(f"'precision' is chosen when the model is loaded: engram.load(dir, precision=...); "
                                f"this one has {self.precision!r}")
            if k not in self.inputs and k not in self.options and k != "model":
                raise TypeError(f"{k!r} is not an input or an option of the {self.family} family "
                                f"(inputs: {', '.join(self.inputs)}; options: {', '.join(self.options) or 'none'})")
        body = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in fields.items() if v is not None}
        try:
            text = json.dumps(body, allow_nan=False)
        except (TypeError, ValueError):
            _name_the_field(body)
            raise
        return _convert(json.loads(self._m.run(text)))

    def _need(self, family, what):
        if self.family != family:
            raise TypeError(f"{what} is for {family} models; {self.dir} holds a {self.family} model")

    # ---- conveniences, one per family ----

    def translate_batch(self, sources, beam=None, n_best=None, return_attention=False, target_prefix=None, batch=64,
                        **options):
        """seq2seq: a list of sentences -> per sentence its n-best list of {"tgt", "score"} (with
        return_attention: "attention" α [T, S], "src_tokens", "tgt_tokens"). ``batch``: sentences
        decoded together, sorted by length (``engram translate --batch``). An option left out (None)
        is the model's default (``m.defaults``: its run's ``decode:`` section over the family's)."""
        self._need("seq2seq", "translate_batch")
        if isinstance(sources, str):
            raise TypeError("translate_batch takes a list of sentences; translate(sentence) takes one")
        reply = self.run(src=list(sources), beam=beam, n_best=n_best, alignments=return_attention or None, batch=batch,
                         target_prefix=None if target_prefix is None else list(target_prefix), **options)
        out = reply["translations"]
        for hyps in out:
            for h in hyps:
                if "alignment" in h:
                    h["attention"] = h.pop("alignment")
        return out

    def translate(self, sentence, **options):
        """seq2seq: one sentence -> its best translation's text."""
        hyps = self.translate_batch([sentence], **options)[0]
        return hyps[0]["tgt"] if hyps else ""

    def summarize(self, article, target_prefix=None, **options):
        """pointer_generator: an article -> {"summary", "tokens" (each with p_gen, attention), ...}."""
        self._need("pointer_generator", "summarize")
        return self.run(article=article, target_prefix=target_prefix, **options)

    def transcribe(self, audio, sample_rate=None, **options):
        """speech: a WAV path, WAV bytes, or a mono numpy waveform (with sample_rate) -> {"text",
        "digits", "attention", "spectrogram", ...}."""
        self._need("speech", "transcribe")
        if isinstance(audio, (str, os.PathLike)):
            with open(audio, "rb") as f:
                data = f.read()
        elif isinstance(audio, (bytes, bytearray)):
            data = bytes(audio)
        else:
            if sample_rate is None:
                raise TypeError("transcribe: a waveform needs sample_rate")
            data = _wav_bytes(audio, sample_rate)
        return self.run(wav_base64=base64.b64encode(data).decode("ascii"), **options)

    def answer(self, story, question):
        """memn2n: story sentences and a question -> {"answer", "probability", "hops" [K, N], ...}."""
        self._need("memn2n", "answer")
        return self.run(story=list(story) if not isinstance(story, str) else story, question=question)

    def solve(self, points, **options):
        """pointer: points (a list of numbers, or [x, y] pairs) -> {"output", "attention", ...}."""
        self._need("pointer", "solve")
        return self.run(points=points.tolist() if isinstance(points, np.ndarray) else points, **options)

    def sentiment(self, text):
        """tree: a PTB tree "(3 (2 It) (4 rocks))" or plain text -> {"label", "nodes", ...}."""
        self._need("tree", "sentiment")
        return self.run(text=text)


def load(path, precision=None, threads=1):
    """A model directory (config.yaml) or a run directory (its best/, else last/) of any family.
    ``precision``: "fp32", "bf16" or "int8" weights; None: the model's own (its run's decode:
    section), else fp32."""
    return Model(path, precision, threads)


def train(config, overrides=None, on_progress=None, threads=1, poll_seconds=0.2):
    """Trains (or resumes) the run of a YAML config (or a run directory) as ``engram train`` does;
    returns its run directory. ``overrides``: {"train.max_steps": 100, ...} (``--set``).
    ``on_progress(event)`` gets each line of the run's metrics.jsonl as a dict as it is written.
    Ctrl-C (KeyboardInterrupt) stops the run after its current update, saved and resumable, and
    re-raises."""
    sets = [f"{k}={'true' if v is True else 'false' if v is False else v}" for k, v in (overrides or {}).items()]
    job = _TrainJob(os.fspath(config), sets, threads)
    metrics = os.path.join(job.run_dir, "metrics.jsonl") if job.run_dir else None
    seen = os.path.getsize(metrics) if metrics and os.path.exists(metrics) else 0

    def poll():
        nonlocal seen
        if on_progress is None or not metrics or not os.path.exists(metrics):
            return
        with open(metrics, "rb") as f:
            f.seek(seen)
            chunk = f.read()
        end = chunk.rfind(b"\n") + 1  # whole lines only
        seen += end
        for line in chunk[:end].splitlines():
            if line.strip():
                on_progress(json.loads(line))

    try:
        while not job.wait(poll_seconds):
            poll()
    except KeyboardInterrupt:
        request_stop()
        job.wait(-1)
        raise
    job.result()
    poll()
    return job.run_dir


def bleu(hyps, refs, tokenize="13a", lowercase=False):
    """Corpus BLEU as sacreBLEU computes it. refs: one list of references per reference set (or a
    list of strings: one reference each). -> {"score", "counts", "totals", "precisions", "bp", ...}."""
    if refs and isinstance(refs[0], str):
        refs = [refs]
    return _bleu(list(hyps), [list(r) for r in refs], tokenize, lowercase)


def chrf(hyps, refs, word_order=0):
    """Corpus chrF (word_order=2: chrF++) as sacreBLEU computes it. -> {"score", "name", "signature"}."""
    if refs and isinstance(refs[0], str):
        refs = [refs]
    return _chrf(list(hyps), [list(r) for r in refs], word_order)


def rouge(hyps, refs, use_stemmer=False):
    """ROUGE-1/2/L/Lsum as rouge_score computes them, averaged over segments."""
    return _rouge(list(hyps), list(refs), use_stemmer)
