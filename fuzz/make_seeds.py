#!/usr/bin/env python3
"""Writes the handmade seed corpus fuzz/corpus/<reader>/ (valid inputs and typical invalid ones).

Run from anywhere: python3 fuzz/make_seeds.py. Every file is small (a few KB at most) and made up
here, not taken from a corpus. Files whose names start with "bad-" are expected to be rejected
with an engram::Error, "ok-" files to be accepted, "odd-" files are accepted although they are
questionable (see fuzz/README.md). An input that reproduces an open finding goes to
fuzz/findings/<reader>/ instead (finding()); once the bug is fixed it becomes a regress-* file of
the corpus (regression()). The script rewrites only its own files.
"""
import gzip
import json
import math
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
FINDINGS = os.path.join(os.path.dirname(ROOT), "findings")


def put(reader, name, data, root=ROOT):
    d = os.path.join(root, reader)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    assert len(data) <= 8192, (reader, name, len(data))
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def finding(reader, name, data):
    """An input that reproduces an open finding: kept in fuzz/findings/, out of the replayed corpus."""
    put(reader, name, data, root=FINDINGS)


def regression(reader, name, data):
    """The input of a fixed finding: a regression case of the replayed corpus (regress-*)."""
    put(reader, "regress-" + name, data)


def yaml_laughs(indent="", levels=9):
    """YAML aliases nested `levels` deep, ten to a list: 10**levels nodes as a tree, ~50 bytes a level."""
    lines = [indent + "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    names = "abcdefghijklmnop"
    for prev, cur in zip(names, names[1:levels]):
        lines.append(indent + "%s: &%s [%s]" % (cur, cur, ", ".join(["*" + prev] * 10)))
    return "\n".join(lines) + "\n"


# ---- safetensors --------------------------------------------------------------------------------

def safetensors(header, data=b"", pad=True, raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def st_tensors(tensors, metadata=None):
    """tensors: list of (name, shape, values) laid out in name order."""
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, shape, values in sorted(tensors):
        b = f32(*values)
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    return safetensors(header, data)


def seeds_safetensors():
    r = "safetensors"
    put(r, "ok-one-tensor", st_tensors([("a", [2], [1, 2])]))  # the 72-byte example of safetensors.h
    put(r, "ok-three-tensors-metadata",
        st_tensors([("decoder/w", [2, 3], range(6)), ("encoder/b", [3], [0.5, -1, 1e-30]), ("scale", [], [2])],
                   {"format": "pt", "note": "fuzz seed"}))
    put(r, "ok-empty-tensor", st_tensors([("empty", [0, 4], []), ("x", [1, 1, 1, 1], [3])]))
    put(r, "ok-no-tensors", safetensors({}))
    put(r, "ok-unpadded", safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, f32(1), pad=False))
    put(r, "ok-special-floats", st_tensors([("v", [4], [math.inf, -math.inf, math.nan, -0.0])]))
    put(r, "bad-empty", b"")
    put(r, "bad-short", b"\x08\x00\x00")
    put(r, "bad-header-length-huge", struct.pack("<Q", 1 << 62) + b"{}")
    put(r, "bad-header-past-eof", struct.pack("<Q", 100) + b"{}")
    put(r, "bad-json", safetensors(None, raw_header=b'{"a":{"dtype":"F32",'))
    put(r, "bad-not-object", safetensors([1, 2]))
    put(r, "bad-dtype-f16", safetensors({"a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4))
    put(r, "bad-rank5", safetensors({"a": {"dtype": "F32", "shape": [1, 1, 1, 1, 1], "data_offsets": [0, 4]}}, f32(1)))
    put(r, "bad-negative-dim", safetensors({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, f32(1)))
    put(r, "bad-dim-overflow",
        safetensors({"a": {"dtype": "F32", "shape": [2**31, 2**31, 2**31, 2**31], "data_offsets": [0, 0]}}))
    put(r, "bad-dim-float", safetensors({"a": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}}, f32(1)))
    put(r, "bad-offsets-size", safetensors({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, f32(1)))
    put(r, "bad-offsets-reversed", safetensors({"a": {"dtype": "F32", "shape": [0], "data_offsets": [4, 0]}}, f32(1)))
    put(r, "bad-offsets-huge",
        safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [2**64 - 4, 2**64]}}, f32(1)))
    put(r, "bad-overlap", safetensors({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                       "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, f32(1, 2)))
    put(r, "bad-gap", safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, f32(1, 2)))
    put(r, "bad-trailing-bytes", safetensors({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, f32(1, 2)))
    put(r, "bad-truncated-data", safetensors({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, f32(1)))
    put(r, "bad-metadata-not-string", safetensors({"__metadata__": {"k": 1}}))
    put(r, "bad-metadata-not-object", safetensors({"__metadata__": "x"}))
    put(r, "bad-entry-not-object", safetensors({"a": [1]}))
    put(r, "bad-missing-shape", safetensors({"a": {"dtype": "F32", "data_offsets": [0, 0]}}))
    put(r, "odd-empty-name-reader-accepts-writer-refuses", safetensors({"": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, f32(1)))
    put(r, "bad-deep-json", safetensors(None, raw_header=b"[" * 4000 + b"]" * 4000))
    put(r, "bad-deep-json-object", safetensors(None, raw_header=b'{"a":' * 1200 + b"1" + b"}" * 1200))
    put(r, "ok-duplicate-key-last-wins",
        safetensors(None, raw_header=b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                     b'"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', data=f32(1, 2)))


# ---- checkpoint ---------------------------------------------------------------------------------

PARAMS = [("decoder/w", [2, 3], [0.1 * i for i in range(6)]), ("encoder/b", [3], [1, 2, 3]), ("scale", [], [0.5])]
CONFIG = "format_version: 1\nmodel: toy\nconfig:\n  hidden: 3\n  cell: gru\n"


def ckpt(**files):
    """Sections "=== NAME\\nBODY" joined by "\\n" (the '\\n' before a header is not part of a body)."""
    parts = []
    for name, body in files.items():
        name = name.replace("_", ".", 1)  # config_yaml -> config.yaml
        if isinstance(body, str):
            body = body.encode()
        parts.append(b"=== " + name.encode() + b"\n" + body)
    return b"\n".join(parts)


def adam_state(step="3", lr="0.001", kind="adam"):
    tensors = [("exp_avg/" + n, s, v) for n, s, v in PARAMS] + [("exp_avg_sq/" + n, s, v) for n, s, v in PARAMS]
    return st_tensors(tensors, {"optimizer": kind, "step": step, "lr": lr})


def seeds_checkpoint():
    r = "checkpoint"
    model = st_tensors(PARAMS)
    put(r, "ok-model", ckpt(config_yaml=CONFIG, model_safetensors=model))
    put(r, "ok-optimizer-trainer", ckpt(config_yaml=CONFIG, model_safetensors=model, optimizer_safetensors=adam_state(),
                                       trainer_json='{"step": 10, "epoch": 1, "best": {"bleu": 12.5}}'))
    put(r, "ok-config-null", ckpt(config_yaml="format_version: 1\nmodel: toy\n", model_safetensors=model))
    put(r, "bad-empty", b"")
    put(r, "bad-no-model-file", ckpt(config_yaml=CONFIG))
    put(r, "bad-version-2", ckpt(config_yaml=CONFIG.replace("1", "2", 1), model_safetensors=model))
    put(r, "bad-version-text", ckpt(config_yaml="format_version: one\nmodel: toy\n", model_safetensors=model))
    put(r, "bad-no-model-name", ckpt(config_yaml="format_version: 1\n", model_safetensors=model))
    put(r, "bad-model-name-map", ckpt(config_yaml="format_version: 1\nmodel: {a: 1}\n", model_safetensors=model))
    put(r, "bad-config-list", ckpt(config_yaml="format_version: 1\nmodel: toy\nconfig: [1, 2]\n",
                                   model_safetensors=model))
    put(r, "bad-yaml", ckpt(config_yaml="format_version: [1\n", model_safetensors=model))
    put(r, "bad-top-level-list", ckpt(config_yaml="- 1\n- 2\n", model_safetensors=model))
    put(r, "bad-wrong-shape", ckpt(config_yaml=CONFIG, model_safetensors=st_tensors(
        [("decoder/w", [3, 2], range(6)), ("encoder/b", [3], [1, 2, 3]), ("scale", [], [0.5])])))
    put(r, "bad-missing-tensor", ckpt(config_yaml=CONFIG, model_safetensors=st_tensors(PARAMS[:2])))
    put(r, "bad-extra-tensor", ckpt(config_yaml=CONFIG, model_safetensors=st_tensors(PARAMS + [("zz", [1], [0])])))
    put(r, "bad-model-not-safetensors", ckpt(config_yaml=CONFIG, model_safetensors="not a tensor file"))
    put(r, "bad-nonfinite-weight", ckpt(config_yaml=CONFIG, model_safetensors=st_tensors(
        [("decoder/w", [2, 3], [0, 1, math.nan, 3, 4, 5]), ("encoder/b", [3], [1, 2, 3]), ("scale", [], [math.inf])])))
    put(r, "bad-unknown-top-key", ckpt(config_yaml=CONFIG + "extra: 1\n", model_safetensors=model))
    put(r, "bad-duplicate-key", ckpt(config_yaml=CONFIG + "model: other\n", model_safetensors=model))
    put(r, "bad-trainer-json", ckpt(config_yaml=CONFIG, model_safetensors=model, trainer_json='{"step": '))
    put(r, "bad-optimizer-kind", ckpt(config_yaml=CONFIG, model_safetensors=model,
                                      optimizer_safetensors=adam_state(kind="sgd")))
    put(r, "bad-optimizer-step-text", ckpt(config_yaml=CONFIG, model_safetensors=model,
                                           optimizer_safetensors=adam_state(step="three")))
    # Rejected only after the tensors were copied in (fixed in 9e2f932).
    for what, step in (("negative", "-1"), ("fraction", "1.5")):
        regression(r, "partial-load-step-" + what, ckpt(config_yaml=CONFIG, model_safetensors=model,
                                                     optimizer_safetensors=adam_state(step=step)))
    # Hung in io::parse_yaml / load_yaml_file's duplicate-key check, which walked aliases as a tree
    # (fixed in 899c847: a million-node limit counting aliases expanded).
    regression(r, "yaml-aliases-exponential", ckpt(config_yaml="format_version: 1\nmodel: toy\nconfig:\n" +
                                                yaml_laughs("  ")))
    # Depth bombs: nesting far past any limit in each file of a model directory that is parsed.
    put(r, "bad-deep-config-flow", ckpt(config_yaml="format_version: 1\nmodel: toy\nconfig: " + "[" * 3000 +
                                        "]" * 3000 + "\n", model_safetensors=model))
    put(r, "bad-deep-config-block", ckpt(config_yaml="format_version: 1\nmodel: toy\nconfig:\n" +
                                         "".join(" " * i + "- \n" for i in range(1, 90)), model_safetensors=model))
    put(r, "bad-deep-trainer-json", ckpt(config_yaml=CONFIG, model_safetensors=model,
                                         trainer_json="[" * 3000 + "]" * 3000))
    put(r, "bad-deep-trainer-json-object", ckpt(config_yaml=CONFIG, model_safetensors=model,
                                                trainer_json='{"a":' * 1200 + "1" + "}" * 1200))
    put(r, "bad-optimizer-missing-slot", ckpt(config_yaml=CONFIG, model_safetensors=model, optimizer_safetensors=st_tensors(
        [("exp_avg/" + n, s, v) for n, s, v in PARAMS], {"optimizer": "adam", "step": "1"})))


# ---- config -------------------------------------------------------------------------------------

def seeds_config():
    r = "config"
    cfg_dir = os.path.join(os.path.dirname(ROOT), "..", "configs")
    for name in ("dates.yaml", "ntm-copy.yaml", "babi-1k-joint.yaml", "tatoeba-zh-en.yaml"):
        with open(os.path.join(cfg_dir, name), "rb") as f:
            put(r, "ok-configs-" + name, f.read())
    put(r, "ok-seq2seq-minimal", "model: seq2seq\n")
    put(r, "ok-ntm-minimal", "model: ntm\n")
    put(r, "ok-memn2n-minimal", "model: memn2n\n")
    put(r, "ok-sets", "model: seq2seq\n#set seq2seq.hidden=64\n#set train.optimizer.lr=1e-4\n"
                      "#set data.train_tsv=pairs.tsv\n#set train.clip={global_norm: 1.0}\n")
    put(r, "ok-flow-and-floats", "{model: seq2seq, seq2seq: {dropout: .5, label_smoothing: 1e-1}, "
                                 "train: {optimizer: {lr: +3.0e-3, eps: .inf}}}\n")
    put(r, "ok-quoted-strings", 'model: "seq2seq"\ndata: {train_src: "a b\\tc", train_tgt: \'it\'\'s\', '
                                'generator: "", valid_tsv: "\\u00e9\\U0001F600"}\n')
    put(r, "ok-anchors", "model: seq2seq\ndata: &d {max_length: 30}\nseq2seq: {hidden: 32}\n")
    put(r, "bad-empty", "")
    put(r, "bad-no-model", "data: {max_length: 3}\n")
    put(r, "bad-unknown-family", "model: transformer\n")
    put(r, "bad-unknown-key", "model: seq2seq\nseq2seq: {hiden: 3}\n")
    put(r, "bad-type-int", "model: seq2seq\nseq2seq: {hidden: 3.5}\n")
    put(r, "bad-int-range", "model: seq2seq\nseq2seq: {hidden: 99999999999999999999}\n")
    put(r, "bad-hex-int", "model: seq2seq\nseq2seq: {hidden: 0x10}\n")
    put(r, "bad-enum", "model: seq2seq\nseq2seq: {cell: transformer}\n")
    put(r, "bad-bool", "model: seq2seq\nseq2seq: {bidirectional: maybe}\n")
    put(r, "bad-list-for-scalar", "model: seq2seq\nseq2seq: {hidden: [1, 2]}\n")
    put(r, "bad-map-for-list", "model: memn2n\ntask: {seeds: {a: 1}}\n")
    put(r, "bad-yaml-syntax", "model: seq2seq\n  data: [\n")
    put(r, "bad-tab-indent", "model: seq2seq\nseq2seq:\n\thidden: 3\n")
    put(r, "bad-top-list", "- model\n- seq2seq\n")
    put(r, "bad-scalar", "seq2seq\n")
    put(r, "bad-alias-map-key", "model: seq2seq\n? [a, b]\n: 1\n")
    put(r, "bad-set-syntax", "model: seq2seq\n#set noequals\n#set .a=1\n#set a..b=2\n#set seq2seq.hidden=[1\n")
    put(r, "bad-deep-flow", "model: seq2seq\nx: " + "[" * 1500 + "]" * 1500 + "\n")
    put(r, "bad-deep-flow-map", "model: seq2seq\nx: " + "{a: " * 1500 + "1" + "}" * 1500 + "\n")
    put(r, "bad-deep-block", "model: seq2seq\nx:\n" + "".join(" " * i + "a:\n" for i in range(1, 100)))
    put(r, "bad-deep-set", "model: seq2seq\n#set seq2seq.hidden=" + "[" * 3000 + "]" * 3000 + "\n")
    put(r, "bad-many-aliases", "model: seq2seq\n" + yaml_laughs(levels=3))  # 1000 nodes as a tree: fast
    regression(r, "yaml-aliases-exponential.yaml", "model: seq2seq\n" + yaml_laughs())
    put(r, "bad-binary", b"model: seq2seq\n\x00\xff\xfe")
    put(r, "bad-nan-int", "model: seq2seq\nseq2seq: {hidden: .nan}\n")
    put(r, "bad-tag", "model: !!binary c2VxMnNlcQ==\n")


# ---- parallel -----------------------------------------------------------------------------------

TSV = ("Hi.\t嗨。\tCC-BY 2.0 (France) Attribution: example #1\n"
       "Run!\t跑！\tCC-BY 2.0 (France) Attribution: example #2\n"
       "I see.\t我明白了。\tCC-BY 2.0 (France) Attribution: example #3\n"
       "\t空\tempty source\n"
       "Good morning, everybody.\t大家早上好。\tlong\n")


def seeds_parallel():
    r = "parallel"
    put(r, "ok-tatoeba-like.tsv", TSV)
    put(r, "ok-crlf.tsv", TSV.replace("\n", "\r\n"))
    put(r, "ok-no-final-newline.tsv", "a b\tc d\te\nf\tg\th")
    put(r, "ok-blank-lines.tsv", "\n\na\tb\tc\n \t \t \n")
    put(r, "ok-parallel-split", b"ein Hund .\nzwei Katzen .\n\xffa dog .\ntwo cats .\n")
    put(r, "ok-unicode.tsv", "😀 é\tñ 中文\t\u200b\n\u0000nul\tx\ty\n")
    put(r, "ok-gzip.tsv.gz", gzip.compress(TSV.encode(), mtime=0))
    put(r, "bad-invalid-utf8.tsv", b"ok\tline\tx\nbad \xc3\x28\tx\ty\n")
    put(r, "bad-overlong.tsv", b"a\t\xc0\xaf\tx\n")
    put(r, "bad-surrogate.tsv", b"a\t\xed\xa0\x80\tx\n")
    put(r, "bad-above-max.tsv", b"a\t\xf4\x90\x80\x80\tx\n")
    put(r, "bad-truncated-seq.tsv", b"a\tb\t\xe4\xb8")
    put(r, "bad-one-field.tsv", "only one field\n")
    put(r, "bad-line-count", b"one\ntwo\n\xffonly one\n")
    # Read silently as a shorter corpus (fixed in 99b2fea).
    regression(r, "gzip-truncated-accepted-1.gz", gzip.compress(TSV.encode() * 4, mtime=0)[:40])
    regression(r, "gzip-truncated-accepted-2.gz", gzip.compress(TSV.encode(), mtime=0)[:-4])  # no length field
    put(r, "bad-gzip-garbage.gz", b"\x1f\x8b\x08\x00garbage garbage garbage")
    regression(r, "gzip-truncated-accepted-magic-only", b"\x1f\x8b")


# ---- bAbI ---------------------------------------------------------------------------------------

BABI = ("1 Mary moved to the bathroom.\n2 John went to the hallway.\n3 Where is Mary? \tbathroom\t1\n"
        "4 Daniel went back to the hallway.\n5 Sandra moved to the garden.\n6 Where is Daniel? \thallway\t4\n"
        "1 Sandra travelled to the office.\n2 Sandra went to the bathroom.\n3 Where is Sandra? \tbathroom\t2\n")


def seeds_babi():
    r = "babi"
    put(r, "ok-qa1-like.txt", BABI)
    put(r, "ok-qa8-lists.txt", "1 Mary got the apple there.\n2 Mary grabbed the football.\n"
                               "3 What is Mary carrying?\tapple,football\t1 2\n")
    put(r, "ok-qa2-two-facts.txt", "1 John picked up the milk.\n2 John went to the kitchen.\n"
                                   "3 Where is the milk?\tkitchen\t2 1\n")
    put(r, "ok-long-story.txt", "".join("%d Sam went to room%d.\n" % (i, i) for i in range(1, 61)) +
        "61 Where is Sam?\troom60\t60 1\n")
    put(r, "ok-crlf-blank.txt", BABI.replace("\n", "\r\n", 3) + "\n\n")
    put(r, "ok-punctuation.txt", "1 ... !!\n2 Why? \t?\t1\n")
    put(r, "bad-no-id.txt", "Mary moved to the bathroom.\n")
    put(r, "bad-id-skip.txt", "1 a b.\n3 c d.\n")
    put(r, "bad-id-not-number.txt", "1 a.\nx b.\n")
    put(r, "bad-id-huge.txt", "1 a.\n99999999999999999999999 b.\n")
    put(r, "bad-negative-id.txt", "-1 a.\n")
    put(r, "bad-question-no-answer.txt", "1 a.\n2 Where?\t\n")
    put(r, "bad-question-no-support.txt", "1 a.\n2 Where?\tbathroom\n")
    put(r, "bad-support-future.txt", "1 a.\n2 Where?\tx\t3\n3 b.\n")
    put(r, "bad-support-question.txt", "1 a.\n2 Where?\tx\t1\n3 Why?\ty\t2\n")
    put(r, "bad-support-zero.txt", "1 a.\n2 Where?\tx\t0\n")
    put(r, "bad-support-text.txt", "1 a.\n2 Where?\tx\tone\n")
    put(r, "bad-invalid-utf8.txt", b"1 \xff\xfe.\n")
    put(r, "bad-too-many-tabs.txt", "1 a.\n2 Where?\tx\t1\textra\n")


# ---- trees --------------------------------------------------------------------------------------

def seeds_tree():
    r = "tree"
    put(r, "ok-sst-like.txt", "(3 (2 It) (4 (2 's) (4 (3 (2 a) (4 (3 fine) (2 film))) (2 .))))\n"
                              "(1 (2 (2 The) (1 plot)) (1 (1 (2 is) (1 thin)) (2 .)))\n"
                              "(2 (2 -LRB-) (2 (2 a\\/b) (2 -RRB-)))\n")
    put(r, "ok-unary-nary.txt", "(4 (4 rocks))\n(2 (1 a) (2 b) (3 c) (4 d))\n(0 x)\n")
    put(r, "ok-whitespace.txt", "  ( 3\t(2  It )(4   (1 x) ) )  \r\n\n(2 (2 ``) (2 '') (2 \\*))\n")
    put(r, "ok-unlabelled.txt", "(-1 (-1 a) (-1 b))\n")
    put(r, "ok-utf8-tokens.txt", "(2 (2 café) (2 日本))\n")
    put(r, "ok-deep-30.txt", "".join("(2 " for _ in range(30)) + "x" + ")" * 30 + "\n")
    put(r, "ok-wide.txt", "(2 " + " ".join("(%d w%d)" % (i % 5, i) for i in range(300)) + ")\n")
    put(r, "bad-unbalanced-open.txt", "(3 (2 It) (4 x)\n")
    put(r, "bad-unbalanced-close.txt", "(3 (2 It))) \n")
    put(r, "bad-label-5.txt", "(5 x)\n")
    put(r, "bad-label-minus.txt", "(-2 x)\n")
    put(r, "bad-label-missing.txt", "((2 x))\n")
    put(r, "bad-label-text.txt", "(pos x)\n")
    put(r, "bad-empty-node.txt", "()\n")
    put(r, "bad-no-token.txt", "(2)\n")
    put(r, "bad-token-and-children.txt", "(2 x (2 y))\n")
    put(r, "bad-two-tokens.txt", "(2 x y)\n")
    put(r, "bad-trailing.txt", "(2 x) y\n")
    put(r, "bad-no-paren.txt", "just words\n")
    put(r, "bad-deep-2000.txt", "(2 " * 2000 + "x" + ")" * 2000 + "\n")
    put(r, "bad-deep-unclosed.txt", "(2 " * 2700 + "\n")
    put(r, "bad-deep-parens-only.txt", "(" * 8000 + "\n")
    put(r, "bad-invalid-utf8.txt", b"(2 \xff)\n")
    put(r, "bad-label-big.txt", "(99999999999999999999 x)\n")


# ---- WAV ----------------------------------------------------------------------------------------

def chunk(cid, body):
    return cid + struct.pack("<I", len(body)) + body + (b"\0" if len(body) % 2 else b"")


def wav(samples=None, rate=8000, channels=1, bits=16, fmt_tag=1, data=None, extra=b"", riff_size=None, fmt_body=None):
    if data is None:
        samples = samples if samples is not None else [int(8000 * math.sin(i * 0.3)) for i in range(400)]
        data = struct.pack("<%dh" % len(samples), *samples)
    block = channels * bits // 8
    fmt = fmt_body if fmt_body is not None else struct.pack("<HHIIHH", fmt_tag, channels, rate, rate * block, block,
                                                            bits)
    body = b"WAVE" + chunk(b"fmt ", fmt) + extra + chunk(b"data", data)
    return b"RIFF" + struct.pack("<I", riff_size if riff_size is not None else len(body)) + body


def seeds_wav():
    r = "wav"
    put(r, "ok-8k-sine.wav", wav())
    put(r, "ok-16k.wav", wav(rate=16000, samples=[(-1) ** i * 32767 for i in range(300)]))
    put(r, "ok-extremes.wav", wav(samples=[-32768, 32767, 0, -1, 1] * 60))
    put(r, "ok-list-chunk.wav", wav(extra=chunk(b"LIST", b"INFOISFT\x05\x00\x00\x00fuzz\x00\x00")))
    put(r, "ok-odd-chunk.wav", wav(extra=chunk(b"junk", b"abc")))
    put(r, "ok-one-sample.wav", wav(samples=[123]))
    put(r, "ok-rate-1.wav", wav(rate=1, samples=[1, 2, 3]))
    put(r, "ok-192k.wav", wav(rate=192000, samples=list(range(0, 3000, 7))))
    ext = struct.pack("<HHIIHHHHIH14s", 0xFFFE, 1, 8000, 16000, 2, 16, 22, 16, 4, 1,
                      b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71")
    put(r, "ok-extensible.wav", wav(fmt_body=ext))
    put(r, "bad-empty.wav", b"")
    put(r, "bad-not-riff.wav", b"fLaC\x00\x00\x00\x22" + b"\0" * 40)
    put(r, "bad-stereo.wav", wav(channels=2))
    put(r, "bad-8bit.wav", wav(bits=8, data=bytes(range(200))))
    put(r, "bad-24bit.wav", wav(bits=24, data=b"\1\2\3" * 100))
    put(r, "bad-float.wav", wav(fmt_tag=3, bits=32, data=struct.pack("<4f", 0.1, -0.2, 0.3, 0)))
    put(r, "bad-ulaw.wav", wav(fmt_tag=7, bits=8, data=bytes(100)))
    put(r, "bad-no-data.wav", b"RIFF" + struct.pack("<I", 28) + b"WAVE" + chunk(b"fmt ", struct.pack(
        "<HHIIHH", 1, 1, 8000, 16000, 2, 16)))
    put(r, "bad-empty-data.wav", wav(samples=[]))
    put(r, "bad-data-too-long.wav", wav()[:-100])
    put(r, "bad-data-huge.wav", wav(samples=[1, 2])[:-8] + b"data" + struct.pack("<I", 0xFFFFFFF0))
    put(r, "bad-rate-0.wav", wav(rate=0))
    put(r, "bad-rate-huge.wav", wav(rate=1000000))
    put(r, "bad-long.wav", wav(rate=1, samples=list(range(700))))
    put(r, "bad-truncated-header.wav", wav()[:30])
    put(r, "odd-riff-size-ffffffff.wav", wav(riff_size=0xFFFFFFFF))
    put(r, "bad-fmt-short.wav", b"RIFF" + struct.pack("<I", 24) + b"WAVE" + chunk(b"fmt ", b"\x01\x00") +
        chunk(b"data", b"\0\0"))
    put(r, "odd-block-align-0.wav", wav(fmt_body=struct.pack("<HHIIHH", 1, 1, 8000, 16000, 0, 16)))


# ---- pointer ------------------------------------------------------------------------------------

def seeds_pointer():
    r = "pointer"
    put(r, "ok-sort.txt", "0.5 0.25 0.75 0.125 output 4 2 1 3\n0.3 0.3 0.1 output 3 1 2\n")
    put(r, "ok-hull.txt", "0.1 0.1 0.9 0.1 0.5 0.5 0.9 0.9 0.1 0.9 output 1 2 4 5 1\n")
    put(r, "ok-tsp.txt", "0 0 1 0 1 1 0 1 output 1 2 3 4 1\n0.2 0.7 0.4 0.1 0.9 0.5 output 1 3 2 1\r\n")
    put(r, "ok-no-closing-repeat.txt", "0 0 1 0 0 1 output 1 2 3\n")
    put(r, "ok-collinear.txt", "0 0 1 1 2 2 3 3 output 1 4 1\n")
    put(r, "ok-coincident.txt", "0.5 0.5 0.5 0.5 0.5 0.5 output 1 1\n")
    put(r, "ok-exponents.txt", "1e-3 -2.5E+2 3.0 4 1e30 -1e-30 output 3 2 1 3\n")
    put(r, "ok-one-point.txt", "0.5 output 1\n")
    put(r, "ok-whitespace.txt", "  0 \t 0   1 1\x0b 2 0\foutput\t1 2 3 1  \n")
    put(r, "ok-many-points.txt", " ".join("%d %d" % (i % 37, (i * 7) % 41) for i in range(400)) + " output 1 2 1\n")
    put(r, "bad-empty-line.txt", "0 0 1 1 output 1 2 1\n\n0 0 output 1\n")
    put(r, "bad-no-output.txt", "0 0 1 1 2 2\n")
    put(r, "bad-no-coords.txt", "output 1 2\n")
    put(r, "bad-odd-coords.txt", "0 0 1 output 1\n")
    put(r, "bad-index-zero.txt", "0 0 1 1 output 0 1\n")
    put(r, "bad-index-high.txt", "0 0 1 1 output 1 3\n")
    put(r, "bad-index-repeat.txt", "0 0 1 1 2 2 output 1 2 2 3\n")
    put(r, "bad-index-text.txt", "0 0 1 1 output one\n")
    put(r, "bad-index-huge.txt", "0 0 1 1 output 99999999999999999999\n")
    put(r, "bad-no-index.txt", "0 0 1 1 output\n")
    put(r, "bad-nan.txt", "nan 0 1 1 output 1 2\n")
    put(r, "bad-inf.txt", "inf 0 1 1 output 1 2\n")
    put(r, "bad-out-of-range-float.txt", "1e39 0 1 1 output 1 2\n")
    put(r, "ok-subnormal.txt", "1e-40 0 1 1 output 1 2\n")
    put(r, "bad-hex-float.txt", "0x1p3 0 1 1 output 1 2\n")
    put(r, "bad-plus-sign.txt", "+1 0 1 1 output 1 2\n")
    put(r, "bad-too-many-indices.txt", "0 0 1 1 output 1 2 1 2\n")


def seeds_bbc():
    # An article, a 0xFF byte, its summary (fuzz/bbc_fuzz.cc); the summary joins sentences with no space.
    r = "bbc"

    def pair(article, summary):
        return article.encode("utf-8") + b"\xff" + summary.encode("utf-8")

    art = ("Ink helps drive democracy\n\nThe Kyrgyz Republic is using ink. It wants fair votes.\n\n"
           "The US agreed to pay. \"This is new,\" he said. J. K. Rowling met U.S. troops.\n")
    put(r, "ok-article.txt", pair(art, "It wants fair votes.\"This is new,\" he said."))
    put(r, "ok-summary-not-in-body.txt", pair(art, "Something else.And more!"))
    put(r, "ok-quotes.txt", pair("Q\n\n\"A. B.\" C? (D.) E...F.\"G\" h.' I.\n", "\"A. B.\"C?"))
    put(r, "ok-crlf.txt", pair("Head\r\n\r\nBody one. Body two.\r\n", "Body two."))
    put(r, "ok-no-summary-cut.txt", art)
    put(r, "bad-empty.txt", b"")
    put(r, "bad-no-headline.txt", pair("\nBody.\n", "Body."))
    put(r, "bad-no-blank-line.txt", pair("Head\nBody.\n", "Body."))
    put(r, "bad-no-body.txt", pair("Head\n\n \n", "Body."))
    put(r, "bad-empty-summary.txt", pair("Head\n\nBody.\n", " \n"))
    put(r, "odd-latin1.txt", b"Mutu\n\nMutu, a \xa315.8m signing.\n")


# ---- serve (JSON request bodies; first byte: the golden model, fuzz/serve_fuzz.cc) ---------------

def seeds_serve():
    r = "serve"
    bomb = "[" * 3500 + "]" * 3500
    obj = '{"a":' * 1300 + "1" + "}" * 1300
    put(r, "bad-deep-points", b"\x03" + ('{"points": ' + bomb + "}").encode())
    put(r, "bad-deep-ignored-field", b"\x03" + ('{"points": [0.5, 0.1], "x": ' + bomb + "}").encode())
    put(r, "bad-deep-object", b"\x03" + ('{"points": [0.5, 0.1], "x": ' + obj + "}").encode())
    put(r, "bad-deep-src", b"\x00" + ('{"src": ' + bomb + "}").encode())
    put(r, "bad-deep-story", b"\x01" + ('{"story": ' + bomb + ', "question": "Where?"}').encode())
    put(r, "bad-deep-unclosed", b"\x04" + ('{"text": ' + "[" * 7000).encode())
    put(r, "bad-deep-65", b"\x03" + ('{"points": [0.5, 0.1], "x": ' + "[" * 64 + "]" * 64 + "}").encode())
    put(r, "ok-depth-64", b"\x03" + ('{"points": [0.5, 0.1], "x": ' + "[" * 63 + "]" * 63 + "}").encode())
    put(r, "bad-duplicate-key", b"\x03" + b'{"points": [0.5, 0.1], "points": [0.2]}')
    put(r, "bad-duplicate-key-nested", b"\x00" + b'{"src": "a", "x": {"k": 1, "k": 2}}')


# ---- http (one connection's bytes, fuzz/http_fuzz.cc) -------------------------------------------

def http_post(path, body, headers=""):
    if isinstance(body, str):
        body = body.encode()
    return (("POST %s HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n" % (path, headers, len(body))).encode()
            + body)


def chunked(path, parts, trailer=""):
    out = ("POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" % path).encode()
    for p in parts:
        out += b"%x\r\n" % len(p) + p.encode() + b"\r\n"
    return out + b"0\r\n" + trailer.encode() + b"\r\n"


def seeds_http():
    r = "http"
    pts = '{"points": [0.5, 0.1, 0.9, 0.3]}'
    put(r, "ok-health", b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
    put(r, "ok-models-metrics", b"GET /v1/models HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n")
    put(r, "ok-static", b"GET / HTTP/1.1\r\n\r\nGET /static/app.js HTTP/1.1\r\nConnection: close\r\n\r\n")
    put(r, "ok-pointer", http_post("/v1/pointer", pts))
    put(r, "ok-pointer-2d", http_post("/v1/pointer", '{"points": [[0.1, 0.2], [0.8, 0.4], [0.5, 0.9]], "views": 2}'))
    put(r, "ok-pipelined", http_post("/v1/pointer", pts) + b"GET /health HTTP/1.1\r\n\r\n" + http_post("/v1/pointer", pts))
    put(r, "ok-chunked", chunked("/v1/pointer", ['{"points": ', "[0.5, 0.1, ", "0.9]}"]))
    put(r, "ok-chunked-trailer", chunked("/v1/pointer", [pts], "X-Trailer: 1\r\n"))
    put(r, "ok-http10", b"GET /health HTTP/1.0\r\n\r\n")
    put(r, "ok-expect-continue", http_post("/v1/pointer", pts, "Expect: 100-continue\r\n"))
    put(r, "ok-same-length-twice", http_post("/v1/pointer", pts, "Content-Length: %d\r\n" % len(pts)))
    put(r, "bad-two-lengths", http_post("/v1/pointer", pts, "Content-Length: 3\r\n"))
    put(r, "bad-length-text", b"POST /v1/pointer HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n{}")
    put(r, "bad-length-and-chunked", http_post("/v1/pointer", pts, "Transfer-Encoding: chunked\r\n"))
    put(r, "bad-te-gzip", b"POST /v1/pointer HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")
    put(r, "bad-no-length", b"POST /v1/pointer HTTP/1.1\r\n\r\n{}")
    put(r, "bad-length-huge", b"POST /v1/pointer HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n{}")
    put(r, "bad-length-over-max", b"POST /v1/pointer HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n{}")
    put(r, "bad-chunk-size-text", b"POST /v1/pointer HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
    put(r, "bad-chunk-size-huge", b"POST /v1/pointer HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{}")
    put(r, "bad-chunk-short", b"POST /v1/pointer HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{}\r\n0\r\n\r\n")
    put(r, "bad-chunks-over-max", chunked("/v1/pointer", [" " * 4000] * 1) + b"")
    put(r, "bad-multipart", http_post("/v1/pointer", "--b\r\n\r\nx\r\n--b--\r\n",
                                      "Content-Type: multipart/form-data; boundary=b\r\n"))
    put(r, "bad-gzip-body", http_post("/v1/pointer", gzip.compress(pts.encode(), mtime=0), "Content-Encoding: gzip\r\n"))
    put(r, "bad-request-line", b"GARBAGE\r\n\r\n")
    put(r, "bad-header-no-colon", b"GET /health HTTP/1.1\r\nNoColon\r\n\r\n")
    put(r, "bad-lf-only", b"GET /health HTTP/1.1\nHost: x\n\n")
    put(r, "bad-header-long", b"GET /health HTTP/1.1\r\nX: " + b"a" * 8000 + b"\r\n\r\n")
    put(r, "bad-path-bytes", b"GET /nowhere%1b%5b31m%ff%00 HTTP/1.1\r\n\r\n")
    put(r, "bad-method", b"BREW /health HTTP/1.1\r\n\r\n")
    put(r, "bad-range", b"GET / HTTP/1.1\r\nRange: bytes=5-1,0-99999999999\r\n\r\n")
    put(r, "bad-get-with-body", b"GET /health HTTP/1.1\r\nContent-Length: 30\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n")
    put(r, "bad-deep-json", http_post("/v1/pointer", '{"points": ' + "[" * 3000 + "]" * 3000 + "}"))
    put(r, "bad-deep-json-chunked", chunked("/v1/pointer", ['{"x": ' + "[" * 1500, "]" * 1500 + "}"]))
    put(r, "bad-deep-opennmt", http_post("/translator/translate", "[" * 3000 + "]" * 3000))
    put(r, "bad-duplicate-key", http_post("/v1/pointer", '{"points": [0.5, 0.1], "points": [0.9]}'))
    put(r, "bad-model-control-bytes", http_post("/v1/pointer", '{"model": "a\\u0001\\u001b[31m", "points": [0.5]}'))
    put(r, "bad-json", http_post("/v1/pointer", '{"points": [0.5,'))


if __name__ == "__main__":
    seeds_safetensors()
    seeds_checkpoint()
    seeds_config()
    seeds_parallel()
    seeds_babi()
    seeds_tree()
    seeds_wav()
    seeds_pointer()
    seeds_bbc()
    seeds_serve()
    seeds_http()
    for reader in sorted(os.listdir(ROOT)):
        files = os.listdir(os.path.join(ROOT, reader))
        print("%-12s %3d files, %6d bytes" % (reader, len(files),
                                             sum(os.path.getsize(os.path.join(ROOT, reader, f)) for f in files)))
