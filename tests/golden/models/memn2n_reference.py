#!/usr/bin/env python3
"""An independent forward pass of the golden MemN2N (tests/golden/models/memn2n/), in float64
with Python's standard library only: the answer and its softmax probability for one story and
question, from model.safetensors, vocab.txt and config.yaml read directly (no engram code).

The maths (Sukhbaatar et al. 2015, as config.yaml sets it up: pe_global, temporal encoding,
adjacent tying, null slots, K = 3 hops, D = 10):
  words of a sentence: ASCII punctuation stripped from both ends of each whitespace token,
    lowercased; unknown words are <unk> (id 1)
  l_kj = 1 + 4 (k - (D+1)/2) (j - (J+1)/2) / (D J)      j = 1..J word, k = 1..D dim, J fixed
  embed_X(sentence)_k = sum_j l_kj X[word_j, k]
  memory sentence i (time t_i = 0 for the most recent, counting back):
    m_i = embed_A(s_i) + T_A[t_i],  c_i = embed_C(s_i) + T_C[t_i]
  memory_size slots; those without a sentence are all zero and stay in the softmax (score 0)
  adjacent tying: A^1 = hop_0/a, C^k = hop_{k-1}/c, A^{k+1} = C^k (T likewise); B = A^1, W = C^K
  u^1 = embed_B(question) (no temporal term)
  p^k = softmax(m^k u^k), o^k = sum_i p^k_i c^k_i, u^{k+1} = u^k + o^k
  answer = softmax(W u^{K+1}) over the vocabulary
Prints "answer<TAB>probability" for each case line given on stdin ("statements. question?").
usage: tests/golden/models/memn2n_reference.py < cases   (e.g. cut -f1 memn2n/cases.tsv | head -3)
"""
import json
import math
import os
import string
import struct
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "memn2n")


def load_tensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        lo, hi = t["data_offsets"]
        flat = struct.unpack("<%df" % ((hi - lo) // 4), raw[8 + n + lo:8 + n + hi])
        rows, cols = t["shape"]
        out[name] = [list(flat[r * cols:(r + 1) * cols]) for r in range(rows)]
    return out


def config_value(key):
    with open(os.path.join(HERE, "config.yaml")) as f:
        for line in f:
            k, _, v = line.strip().partition(":")
            if k == key:
                return v.strip()
    raise KeyError(key)


def tokens(sentence):
    out = []
    for raw in sentence.split():
        t = raw.strip(string.punctuation)
        if t:
            out.append(t.lower())
    return out


def main():
    w = load_tensors(os.path.join(HERE, "model.safetensors"))
    with open(os.path.join(HERE, "vocab.txt")) as f:
        vocab = [line.rstrip("\n") for line in f]
    ids = {t: i for i, t in enumerate(vocab)}
    d, hops = int(config_value("dim")), int(config_value("hops"))
    slots, length = int(config_value("memory_size")), int(config_value("sentence_length"))
    assert config_value("encoding") == "pe_global" and config_value("tying") == "adjacent"
    assert config_value("temporal") == "true" and config_value("null_slots") == "true"

    def l(j, k):  # 1-based word j, dim k
        return 1 + 4 * (k - (d + 1) / 2) * (j - (length + 1) / 2) / (d * length)

    def embed(table, words):
        v = [0.0] * d
        for j, word in enumerate(words, start=1):
            row = table[ids.get(word, 1)]
            for k in range(d):
                v[k] += l(j, k + 1) * row[k]
        return v

    def softmax(s):
        hi = max(s)
        e = [math.exp(x - hi) for x in s]
        z = sum(e)
        return [x / z for x in e]

    a = [w["memn2n/hop_0/a"]] + [w["memn2n/hop_%d/c" % k] for k in range(hops - 1)]
    t_a = [w["memn2n/hop_0/t_a"]] + [w["memn2n/hop_%d/t_c" % k] for k in range(hops - 1)]
    c = [w["memn2n/hop_%d/c" % k] for k in range(hops)]
    t_c = [w["memn2n/hop_%d/t_c" % k] for k in range(hops)]
    for line in sys.stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        story, question = line[:line.index("?")].rsplit(".", 1) if "." in line else ("", line)
        sentences = [tokens(s) for s in story.replace("!", ".").split(".") if tokens(s)][-slots:]
        times = [len(sentences) - 1 - i for i in range(len(sentences))]  # most recent: 0
        u = embed(a[0], tokens(question))
        for k in range(hops):
            m = [[x + y for x, y in zip(embed(a[k], s), t_a[k][t])] for s, t in zip(sentences, times)]
            cc = [[x + y for x, y in zip(embed(c[k], s), t_c[k][t])] for s, t in zip(sentences, times)]
            scores = [sum(x * y for x, y in zip(mi, u)) for mi in m] + [0.0] * (slots - len(m))
            p = softmax(scores)
            o = [sum(p[i] * cc[i][j] for i in range(len(cc))) for j in range(d)]
            u = [x + y for x, y in zip(u, o)]
        answer = softmax([sum(x * y for x, y in zip(row, u)) for row in c[-1]])
        best = max(range(len(answer)), key=lambda i: answer[i])
        print("%s\t%.9f" % (vocab[best], answer[best]))


if __name__ == "__main__":
    main()
