#!/usr/bin/env python3
"""IBM Model 1 (Brown et al. 1993) word alignment of the zh-en training data, to ask what the data
itself says about the seeds' picture: which source word does "to" of "Welcome to Beijing" align
to? (docs/seed-example.md, "to" row.)

Tatoeba cmn-eng (every pair, Chinese as characters, English as words and punctuation) plus
CC-CEDICT entries as "simplified headword -> first sense" pairs (a rough form of
src/engram/data/cedict.h's rules: no cross-references, variants or surnames, headwords of at most
8 characters, senses of at most 6 words). Five EM iterations of t(english | chinese), with and
without the NULL source word; prints each English word's alignment posterior over NULL and the
source characters of the sentences given (default the seeds' 欢迎来北京).

With --no-infinitive-to a dictionary sense "to V" is read as "V" (as seq2seq's
data.dictionary_infinitive_to: false does). With --diagonal T a third model is trained: without
NULL, with fast_align's diagonal prior of tension T (Dyer et al. 2013; seq2seq's
data.guided_alignment_diagonal): English word j of n aligns to character i of S with prior weight
exp(-T |(i+1/2)/S - (j+1/2)/n|), in EM and in the posterior.

Usage: bench/tools/ibm1_alignment.py [--no-infinitive-to] [--diagonal T] [CHINESE<TAB>ENGLISH ...]   (ENGRAM_DATA_DIR, default ../shared/data)
"""
import collections
import math
import os
import re
import sys

WORD = re.compile(r"[A-Za-z']+|[.,!?]")


def corpus(data, infinitive_to=True):
    pairs = []
    with open(os.path.join(data, "tatoeba-zh-en", "cmn.txt"), encoding="utf8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            pairs.append(([c for c in fields[1] if not c.isspace()], WORD.findall(fields[0])))
    entry = re.compile(r"(\S+) (\S+) \[([^\]]*)\] /(.*)/")
    with open(os.path.join(data, "cc-cedict", "cedict_ts.u8"), encoding="utf8") as f:
        for line in f:
            m = None if line.startswith("#") else entry.match(line)
            if not m:
                continue
            simplified, sense = m.group(2), m.group(4).split("/")[0]
            sense = re.sub(r"\(.*?\)", "", sense).split(";")[0].split(",")[0].strip()
            if not sense or "see " in sense or "variant" in sense or "surname" in sense:
                continue
            if len(simplified) > 8 or len(sense.split()) > 6:
                continue
            words = WORD.findall(sense)
            if not infinitive_to and len(words) > 1 and words[0] == "to":
                words = words[1:]
            pairs.append((list(simplified), words))
    return pairs


def weights(t, src, en, j, diagonal):
    """t(f | e) times the diagonal prior of English word j over the source words src."""
    n = len(en)
    prior = [1.0] * len(src) if not diagonal else \
        [math.exp(-diagonal * abs((i + 0.5) / len(src) - (j + 0.5) / n)) for i in range(len(src))]
    return [t[(e, en[j])] * d for e, d in zip(src, prior)]


def train(pairs, null, iterations=5, diagonal=0.0):
    t = collections.defaultdict(lambda: 1.0)  # t(f | e), uniform start
    for _ in range(iterations):
        count, total = collections.defaultdict(float), collections.defaultdict(float)
        for zh, en in pairs:
            src = (["<null>"] if null else []) + zh
            for j, f in enumerate(en):
                w = weights(t, src, en, j, diagonal)
                z = sum(w)
                for e, x in zip(src, w):
                    count[(e, f)] += x / z
                    total[e] += x / z
        t = collections.defaultdict(float, {k: v / total[k[0]] for k, v in count.items()})
    return t


def main():
    data = os.environ.get("ENGRAM_DATA_DIR", "../shared/data")
    args = sys.argv[1:]
    infinitive_to = "--no-infinitive-to" not in args
    args = [a for a in args if a != "--no-infinitive-to"]
    diagonal = 0.0
    if "--diagonal" in args:
        at = args.index("--diagonal")
        diagonal = float(args[at + 1])
        del args[at:at + 2]
    sentences = [a.split("\t") for a in args] or [["欢迎来北京", "Welcome to Beijing"]]
    pairs = corpus(data, infinitive_to)
    print(f"{len(pairs)} pairs ({data}: tatoeba-zh-en/cmn.txt + cc-cedict/cedict_ts.u8)")
    for null, tension in [(True, 0.0), (False, 0.0)] + ([(False, diagonal)] if diagonal else []):
        t = train(pairs, null, diagonal=tension)
        prior = f", diagonal tension {tension:g}" if tension else ""
        print(f"\nIBM Model 1, {'with' if null else 'without'} NULL{prior}, 5 EM iterations: P(source | english word)")
        for zh, en in sentences:
            src = (["<null>"] if null else []) + [c for c in zh if not c.isspace()]
            words = WORD.findall(en)
            print("| english | " + " | ".join(src) + " |")
            print("|---|" + "---:|" * len(src))
            for j, f in enumerate(words):
                w = weights(t, src, words, j, tension)
                z = sum(w) or 1.0
                print(f"| {f} | " + " | ".join(f"{x / z:.2f}" for x in w) + " |")


if __name__ == "__main__":
    main()
