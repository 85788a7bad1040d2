#!/usr/bin/env python3
"""Trains engram's dates recipe for a few hundred updates from Python, then translates held-out
dates and scores them with BLEU (sacreBLEU's) — the whole loop in one script.

    PYTHONPATH=build/python python3 examples/python/train_and_eval.py [RUN_DIR]
"""
import os
import sys

import engram

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    run_dir = sys.argv[1] if len(sys.argv) > 1 else "runs/python-dates"
    losses = []
    engram.train(os.path.join(ROOT, "configs", "dates.yaml"),
                 overrides={"train.run_dir": run_dir, "train.max_steps": 300, "train.max_minutes": 5},
                 on_progress=lambda e: losses.append(e["loss"]) if e.get("event") == "train" else None)
    print(f"trained {run_dir}: loss {losses[0]:.3f} -> {losses[-1]:.3f}" if losses else f"trained {run_dir}")
    m = engram.load(run_dir)
    sources = ["29 November 2026", "Nov 3, 1999", "2001年5月7日", "Tuesday, 14 February 2023"]
    references = ["2026-11-29", "1999-11-03", "2001-05-07", "2023-02-14"]
    hyps = [h[0]["tgt"] for h in m.translate_batch(sources, beam=4)]
    for s, h in zip(sources, hyps):
        print(f"{s} -> {h}")
    print(f"BLEU {engram.bleu(hyps, [references])['score']:.1f}")


if __name__ == "__main__":
    main()
