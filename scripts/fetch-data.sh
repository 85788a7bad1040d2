#!/usr/bin/env bash
# Fetches the public corpora engram's examples, tests and benchmarks use into $ENGRAM_DATA_DIR
# (default ../shared/data relative to the repository). Corpora are never committed to the repo.
# A corpus already present is left alone. Needs curl, unzip/tar/gzip and internet access.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
data="${ENGRAM_DATA_DIR:-$root/../shared/data}"
mkdir -p "$data"
cd "$data"

fetch() {  # fetch URL FILE
  [ -s "$2" ] || { echo "fetching $1"; curl -fL --retry 3 -o "$2" "$1"; }
}

# Multi30k task 1 (Elliott et al. 2016): raw + tokenised train/val/test_2016_flickr.
if [ ! -d multi30k/raw ]; then
  mkdir -p multi30k/raw multi30k/tok
  base=https://github.com/multi30k/dataset/raw/master/data/task1
  for split in train val test_2016_flickr; do
    for lang in de en fr cs; do
      fetch "$base/raw/$split.$lang.gz" "multi30k/raw/$split.$lang.gz"
      fetch "$base/tok/$split.lc.norm.tok.$lang" "multi30k/tok/$split.lc.norm.tok.$lang"
    done
  done
fi

# bAbI QA v1.2 (Weston et al. 2015): en (1k) and en-10k.
if [ ! -d babi/en ]; then
  fetch http://www.thespermwhale.com/jaseweston/babi/tasks_1-20_v1-2.tar.gz babi.tar.gz
  mkdir -p babi && tar -xzf babi.tar.gz -C babi --strip-components=1 && rm babi.tar.gz
fi

# Tatoeba pairs from ManyThings.org (CC-BY 2.0 France): Chinese-English and French-English.
if [ ! -f tatoeba-zh-en/cmn.txt ]; then
  mkdir -p tatoeba-zh-en && fetch https://www.manythings.org/anki/cmn-eng.zip cmn.zip
  unzip -o cmn.zip -d tatoeba-zh-en && rm cmn.zip
fi
if [ ! -f tatoeba-fr-en/fra.txt.gz ]; then
  mkdir -p tatoeba-fr-en && fetch https://www.manythings.org/anki/fra-eng.zip fra.zip
  unzip -o fra.zip -d tatoeba-fr-en && gzip tatoeba-fr-en/fra.txt && rm fra.zip
fi

# CC-CEDICT (MDBG, CC BY-SA 4.0: keep the attribution with anything derived from it that is
# shipped), the Chinese-English dictionary of configs/tatoeba-cedict-zh-en.yaml. MDBG's current
# export: its entry count differs from the 124,263 of the copy the corpus tests were written for.
if [ ! -f cc-cedict/cedict_ts.u8 ]; then
  mkdir -p cc-cedict && fetch https://www.mdbg.net/chinese/export/cedict/cedict_1_0_ts_utf-8_mdbg.txt.gz cedict.gz
  gunzip -c cedict.gz > cc-cedict/cedict_ts.u8 && rm cedict.gz
fi

# Stanford Sentiment Treebank, PTB trees (Socher et al. 2013).
if [ ! -f sst/train.txt ]; then
  fetch https://nlp.stanford.edu/sentiment/trainDevTestTrees_PTB.zip sst.zip
  mkdir -p sst && unzip -o -j sst.zip -d sst && rm sst.zip
fi

# BBC News Summary: the BBC articles of Greene & Cunningham (ICML 2006) with Kaggle's extractive
# summaries, from the copy in Miguel-G-Soares/PRI_proj1 at a fixed commit (research use; the
# folder names lose their spaces: articles/<category>/NNN.txt, summaries/<category>/NNN.txt).
if [ ! -d summarization/bbc-news-summary/articles ]; then
  rev=04750a1fb35aa0e2111e85416e8f54c088cf366a
  fetch "https://github.com/Miguel-G-Soares/PRI_proj1/archive/$rev.tar.gz" bbc.tar.gz
  rm -rf bbc.tmp && mkdir -p bbc.tmp summarization/bbc-news-summary
  tar -xzf bbc.tar.gz -C bbc.tmp --strip-components=1
  mv "bbc.tmp/BBC News Summary/News Articles" summarization/bbc-news-summary/articles
  mv "bbc.tmp/BBC News Summary/Summaries" summarization/bbc-news-summary/summaries
  rm -rf bbc.tmp bbc.tar.gz
fi

echo "corpora in $data"
