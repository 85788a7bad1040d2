#!/usr/bin/env python3
"""The attention heatmap of one translation (the seeds' picture: which source tokens each output
token looked at), drawn with matplotlib from Debian's python3-matplotlib.

    PYTHONPATH=build/python python3 examples/python/attention_heatmap.py runs/demo "29 November 2026" dates.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import engram  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model_dir, sentence, out = sys.argv[1:]
    m = engram.load(model_dir)
    best = m.translate_batch([sentence], beam=5, return_attention=True)[0][0]
    a = best["attention"]  # [target tokens (+ <eos>), source tokens]
    fig, ax = plt.subplots(figsize=(1 + 0.45 * a.shape[1], 1 + 0.45 * a.shape[0]))
    ax.imshow(a, cmap="Blues", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(a.shape[1]), best["src_tokens"], rotation=90)
    ax.set_yticks(range(a.shape[0]), best["tgt_tokens"])
    ax.set_xlabel("source")
    ax.set_ylabel("output")
    ax.set_title(best["tgt"])
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"{best['tgt']}\nwrote {out}")


if __name__ == "__main__":
    main()
