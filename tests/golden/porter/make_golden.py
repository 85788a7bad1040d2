#!/usr/bin/python3
"""Writes nltk_porter.tsv: word <TAB> nltk.stem.porter.PorterStemmer().stem(word).

The stemmer is the one rouge_score builds (PorterStemmer() in its default NLTK_EXTENSIONS mode),
from Debian's python3-nltk. The words: the examples of Porter's paper (1980), the words the NLTK
extensions are about, and every 20th of the sorted distinct tokens longer than 3 characters
(rouge_score's tokenizer: lowercase, [^a-z0-9]+ -> space) of the BBC News Summary corpus.
Usage: tests/golden/porter/make_golden.py [DATA_DIR]   (default ../shared/data)
"""
import os
import re
import sys

from nltk.stem import porter

here = os.path.dirname(os.path.abspath(__file__))
data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../../shared/data")
root = os.path.join(data, "summarization/bbc-news-summary")

vocab = set()
for sub in ("articles", "summaries"):
    for cat in sorted(os.listdir(os.path.join(root, sub))):
        folder = os.path.join(root, sub, cat)
        for name in sorted(os.listdir(folder)):
            raw = open(os.path.join(folder, name), "rb").read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:  # articles/sport/199.txt is ISO-8859-1
                text = raw.decode("latin-1")
            for w in re.sub(r"[^a-z0-9]+", " ", text.lower()).split():
                if len(w) > 3:
                    vocab.add(w)

paper = """caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled
sized hopping tanned falling hissing fizzed failing filing happy sky relational conditional rational
valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization
predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti
sensibiliti triplicate formative formalize electriciti electrical hopeful goodness revival allowance
inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent
adoption homologou communism activate angulariti homologous effective bowdlerize probate rate cease
controll roll""".split()
extensions = """generalli skies dying lying tying news innings outings cannings howe proceed exceed
succeed says days play played today cries spied died cried fully archaeology geology theology aces
aged ageing always annoyed""".split()

words = sorted(set(paper) | set(extensions) | set(sorted(vocab)[::20]))
stemmer = porter.PorterStemmer()
with open(os.path.join(here, "nltk_porter.tsv"), "w", encoding="ascii", newline="\n") as out:
    for w in words:
        out.write(f"{w}\t{stemmer.stem(w)}\n")
print(f"{len(words)} words from {len(vocab)} corpus tokens")
