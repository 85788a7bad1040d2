#!/usr/bin/env python3
"""Runs every `engram` command of the ```sh blocks of README.md and docs/*.md (ctest Docs.Commands).

Each command is one of:
  trained  `engram train ...` as written plus --set train.max_steps=2: a seconds-long training into
           the run directory the doc names (configs, --set keys and data read as in the real run).
  run      any other engram command as written, in a scratch directory: a model directory it
           names as runs/NAME[/best|/last|/model|/avg] is that run, trained 2 steps from
           configs/NAME.yaml when the doc has not trained it (/avg, engram average's output, is
           its best/: a 2-step run validates once, and an average takes two checkpoints); any other (RUN, RUN2, runs/a, ...)
           is the committed golden model of the verb's family (tests/golden/models/), or for
           speech a 2-step fsdd-digits run. Input files (hyp.en, a.wav, ...) are small fixtures.
           It must exit 0; a `# prints: TEXT` comment on the line is compared with the first
           line of its standard output.
  not run  a `# not run: REASON` comment on the line, or mpirun (listed with the reason).
A command that fails prints the file, the line and engram's error. The summary names each
command's outcome, so a doc command nobody runs is visible.

Usage: doc_commands.py ENGRAM_BIN REPO_ROOT
"""
import gzip
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# The family whose golden model stands in for a verb's -m model.
VERB_FAMILY = {
    "translate": "seq2seq", "attention": "seq2seq", "average": "seq2seq", "run": "seq2seq",
    "babi": "memn2n", "ntm": "ntm", "pointer": "pointer", "sentiment": "tree",
    "summarize": "pointer_generator", "pointer-generator": "pointer_generator",
    "speech": "speech",
}
# Inputs of the documented commands, written into the scratch directory.
FIXTURES = {
    "src-tab-prefix.tsv": "29 November 2026\t2026\n",
    "tsp_20_test.txt": " ".join(f"{(i * 37 % 101) / 101:.4f} {(i * 59 % 103) / 103:.4f}" for i in range(20))
                       + " output " + " ".join(str(i) for i in range(1, 21)) + " 1\n",
}
# FSDD recordings copied in as the speech commands' WAV files.
WAVS = {"a.wav": "3_jackson_0.wav", "b.wav": "5_nicolas_1.wav", "7_theo_0.wav": "7_theo_0.wav",
        "7_theo_1.wav": "7_theo_1.wav"}
# Multi30k test_2016_flickr (the doc translates it into hyp.en): references and sources of the
# BLEU commands; src.zh stands in with the German (only its length in characters is read).
CORPUS_FIXTURES = {"ref.en": "test_2016_flickr.en.gz", "src.de": "test_2016_flickr.de.gz",
                   "src.zh": "test_2016_flickr.de.gz"}
SHELL_OPS = {"<", ">", ">>", "2>", "&", "|", "-"}


def blocks(path):
    """(line number, logical line, comment) of every ```sh block line, continuations joined."""
    out, in_sh, pending, start = [], False, "", 0
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if s.startswith("```"):
                in_sh = s.strip() == "```sh" and not in_sh
                continue
            if not in_sh:
                continue
            if not pending:
                start = n
            if s.endswith("\\") and "#" not in s:
                pending += s[:-1] + " "
                continue
            code, comment = split_comment(pending + s)
            pending = ""
            if code.strip():
                out.append((start, code.strip(), comment))
    return out


def split_comment(line):
    """The code and the trailing `# comment` of a shell line (a # inside quotes is code)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i], line[i + 1:].strip()
    return line, ""


def engram_segments(code):
    """The pipeline segments of `code` that run engram (or build/engram), under mpirun too."""
    return [seg.strip() for seg in code.split("|") if re.match(r"^(mpirun\s.*?\s)?(build/)?engram\b", seg.strip())]


def quote(w):
    """w as a shell word: operators and plain words as they are, anything else quoted."""
    if w in SHELL_OPS or re.fullmatch(r"[^\s'\"()<>|;&*?]+", w):
        return w
    return shlex.quote(w)


class Runs:
    """The model directories the commands name, made on first use in the scratch directory."""

    def __init__(self, engram, root, work, env):
        self.engram, self.root, self.work, self.env = engram, root, work, env
        self.golden = os.path.join(root, "tests", "golden", "models")
        self.log = []

    def train(self, config, run_dir):
        if not os.path.exists(os.path.join(self.work, run_dir, "train.yaml")):
            cmd = [self.engram, "train", os.path.join(self.root, "configs", config + ".yaml"), "--set",
                   "train.max_steps=2", "--set", f"train.run_dir={run_dir}"]
            r = subprocess.run(cmd, cwd=self.work, env=self.env, capture_output=True, text=True, timeout=300)
            if r.returncode != 0:
                raise RuntimeError(f"training {config} for the docs failed: {r.stderr.strip()[-300:]}")
        return os.path.join(self.work, run_dir)

    def model(self, word, verb, first=None):
        """The directory standing in for model path `word` of a `verb` command; `first`: the
        command's -m model (an ensemble member that no config makes is the model itself)."""
        if word.startswith("RUN") and VERB_FAMILY.get(verb) == "seq2seq":
            word = "runs/multi30k-de-en" + word[len(word.split("/")[0]):]
        m = re.fullmatch(r"runs/([\w.-]+)(/(best|last|model|avg))?", word)
        if m and (os.path.exists(os.path.join(self.work, "runs", m.group(1), "train.yaml")) or
                  os.path.exists(os.path.join(self.root, "configs", m.group(1) + ".yaml"))):
            base = self.train(m.group(1), "runs/" + m.group(1))
            return base + ("/best" if m.group(3) == "avg" else (m.group(2) or ""))
        if first:
            return first
        if verb == "speech":  # speech eval reads the run's data config (train.yaml): a run, not the golden model
            return self.train("fsdd-digits", "runs/fsdd-digits")
        return os.path.join(self.golden, VERB_FAMILY.get(verb, "seq2seq"))


def substitute(seg, verb, runs):
    """`seg` with its model paths replaced (Runs.model) and engram's path for the binary."""
    words = shlex.split(seg)
    out, first = [shlex.quote(runs.engram)], None
    for i, w in enumerate(words[1:], 1):
        prev = words[i - 1]
        if prev in ("-m", "--ensemble") or (
                prev != "-o" and re.fullmatch(r"(runs/[\w.-]+(/(best|last|model|avg))?|RUN\d*(/(best|last))?)", w)):
            path = runs.model(w, verb, first if prev == "--ensemble" else None)
            first = first or path
            out.append(quote(path))
        else:
            out.append(quote(w))
    return " ".join(out)


def main():
    engram, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.environ.get("ENGRAM_DATA_DIR") == "":
        print("*** SKIPPING the docs' commands: ENGRAM_DATA_DIR is set to the empty string (they read corpora) ***")
        return 0
    data = os.environ.get("ENGRAM_DATA_DIR", os.path.join(root, "..", "shared", "data"))
    docs = [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    work = tempfile.mkdtemp(prefix="engram-doc-")
    try:
        for name, text in FIXTURES.items():
            with open(os.path.join(work, name), "w", encoding="utf-8") as f:
                f.write(text)
        for d in ("configs", "tests"):  # read only
            os.symlink(os.path.join(root, d), os.path.join(work, d))
        os.makedirs(os.path.join(work, "runs"))
        os.makedirs(os.path.join(work, "docs", "img"))  # pictures the docs draw land here, not in the repository
        env = dict(os.environ, ENGRAM_DATA_DIR=data)
        for name, src in CORPUS_FIXTURES.items():
            with gzip.open(os.path.join(data, "multi30k", "raw", src), "rt", encoding="utf-8") as f, \
                    open(os.path.join(work, name), "w", encoding="utf-8") as o:
                o.write(f.read())
        for name, src in WAVS.items():
            shutil.copy(os.path.join(data, "fsdd", "recordings", src), os.path.join(work, name))
        runs = Runs(engram, root, work, env)
        counts, failures = {"trained": 0, "run": 0, "not run": 0}, []
        for doc in docs:
            rel = os.path.relpath(doc, root)
            for n, code, comment in blocks(doc):
                segs = engram_segments(code)
                if not segs:
                    continue
                where = f"{rel}:{n}"
                skip = re.search(r"not run:\s*(.+)", comment)
                words = shlex.split(segs[0])
                verb = words[1] if len(words) > 1 else ""
                reason = skip.group(1) if skip else \
                    "MPI ranks: tests/train/mpi_test.sh runs engram train under mpirun" if code.startswith("mpirun") else \
                    None
                if reason:
                    counts["not run"] += 1
                    print(f"not run  {where}: {code}  ({reason})")
                    continue
                cmd = code
                try:
                    for seg in segs:
                        if verb == "train":
                            new = " ".join([shlex.quote(engram)] + [quote(w) for w in words[1:]] +
                                           ["--set", "train.max_steps=2"])
                        else:
                            new = substitute(seg, verb, runs)
                        cmd = cmd.replace(seg, new)
                except RuntimeError as e:
                    failures.append(f"{where}: `{code}`: {e}")
                    continue
                cmd = cmd.replace("../shared/data", data)
                kind = "trained" if verb == "train" else "run"
                t0 = time.time()
                r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env, capture_output=True,
                                   text=True, timeout=300)
                want = re.search(r"prints:\s*(.+)", comment)
                got = r.stdout.splitlines()[0].strip() if r.stdout.strip() else ""
                ok = r.returncode == 0 and (not want or got == want.group(1).strip())
                counts[kind] += 1
                print(f"{kind:8} {where}: {code}  ({time.time() - t0:.1f} s)" + ("" if ok else "  FAILED"))
                if not ok:
                    err = (r.stderr.strip().splitlines() or [""])[-1]
                    failures.append(f"{where}: `{code}` -> exit {r.returncode}: {err}" +
                                    (f"; printed '{got}', the doc says '{want.group(1).strip()}'" if want else "") +
                                    f"\n    ran: {cmd}")
        print(f"\n{counts['trained']} trained (2 steps), {counts['run']} run, {counts['not run']} not run")
        for f in failures:
            print("FAILED " + f, file=sys.stderr)
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
