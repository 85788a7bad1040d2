#!/usr/bin/python3
"""The PyTorch side of `bench/tree_speed.sh`: a binary constituency Tree-LSTM (Tai, Socher &
Manning 2015, section 3.2) of the same shapes and update as engram's `tree.cell: treelstm`
(models/tree/cells.h), trained on the same trees, timed in seconds per pass over them.

Same model and update as engram's: embedding E 300 (dense gradient, as engram's), hidden H 150,
C 5 classes; a leaf takes i, o, u from its word vector (c = sigma(i) * tanh(u), h = sigma(o) *
tanh(c)); an inner node takes i, o, f_l, f_r, u from [h_l; h_r] (c = i*u + f_l*c_l + f_r*c_r);
dropout 0.5 on every node's h, a softmax classifier at every node, cross-entropy summed over the
nodes of a tree and averaged over the batch's trees, L2 1e-4/2 ||w||^2 on every non-embedding
weight in the loss, AdaGrad lr 0.05 with the embeddings at 0.1 (a parameter group, as engram's
train.optimizer.param_lr). Vocabulary: the distinct words of the file plus 4 specials (engram's
min_count 1). One update = forward + backward + AdaGrad step over a batch of B trees.

Two executions:
  pertree  node by node: each node's cell on its own [1, .] rows, the usual PyTorch way;
  level    every node of one height across the batch in one product (leaves: one product).

--generate DIR writes DIR/{train,dev,test}.txt: random binary trees of --leaves leaves (each
split point uniform), words w<k> uniform over --words, labels uniform in 0..4, PTB style as SST.

Prints one JSON object per line:
  {"meta": {...}}   torch version, BLAS loaded, malloc tuning, trees and vocabulary
  {"exec": "level", "threads": n, "epoch_s": seconds per pass over the file's trees (median
   batch time x batches), "batch_ms": median, "min_ms", "max_ms", "batches": timed}
Run it as bench/tree_speed.sh does: /usr/bin/python3 with OPENBLAS_CORETYPE=SkylakeX.
Dims: B trees per batch, n nodes, E embedding, H hidden, C classes, V vocab.
"""
import argparse
import json
import os
import random
import statistics
import sys
import time

from torch_env import MALLOC, loaded_libraries, openblas_handle  # noqa: E402  (tunes malloc before torch loads)

import torch  # noqa: E402  (after mallopt)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


# ---- trees ------------------------------------------------------------------------------------

def random_tree(rng, leaves, words):
    """A random binary tree of `leaves` leaves as PTB text, every node labelled."""
    if leaves == 1:
        return f"({rng.randrange(5)} w{rng.randrange(words)})"
    left = rng.randint(1, leaves - 1)
    return f"({rng.randrange(5)} {random_tree(rng, left, words)} {random_tree(rng, leaves - left, words)})"


def generate(out_dir, trees, leaves, words, seed):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    for split, n in (("train", trees), ("dev", max(1, trees // 10)), ("test", max(1, trees // 10))):
        with open(os.path.join(out_dir, f"{split}.txt"), "w") as f:
            for _ in range(n):
                f.write(random_tree(rng, leaves, words) + "\n")


def parse_tree(line):
    """PTB text -> (nodes, root): nodes[i] = (label, word or None, [children]) in post-order."""
    toks = line.replace("(", " ( ").replace(")", " ) ").split()
    nodes, stack, pos = [], [], 0
    while pos < len(toks):
        t = toks[pos]
        if t == "(":
            stack.append([int(toks[pos + 1]), None, []])
            pos += 2
        elif t == ")":
            label, word, kids = stack.pop()
            nodes.append((label, word, kids))
            if stack:
                stack[-1][2].append(len(nodes) - 1)
            pos += 1
        else:
            stack[-1][1] = t
            pos += 1
    return nodes


def load(path):
    trees = [parse_tree(line) for line in open(path) if line.strip()]
    words = sorted({w for t in trees for _, w, _ in t if w is not None})
    vocab = {w: i + 4 for i, w in enumerate(words)}  # after <pad>, <unk>, <go>, <eos>
    return trees, vocab


# ---- model ------------------------------------------------------------------------------------

class TreeLstm(nn.Module):
    def __init__(self, vocab, embed, hidden, classes):
        super().__init__()
        self.h = hidden
        self.embedding = nn.Embedding(vocab, embed)  # [V, E]
        nn.init.uniform_(self.embedding.weight, -0.05, 0.05)
        self.leaf = nn.Linear(embed, 3 * hidden)            # rows: i, o, u
        self.compose = nn.Linear(2 * hidden, 5 * hidden)    # rows: i, o, f_l, f_r, u
        self.classifier = nn.Linear(hidden, classes)
        self.dropout = nn.Dropout(0.5)

    def leaves(self, x):  # x [n, E] -> h, c [n, H]
        i, o, u = self.leaf(x).chunk(3, dim=1)
        c = torch.sigmoid(i) * torch.tanh(u)
        return torch.sigmoid(o) * torch.tanh(c), c

    def inner(self, hl, cl, hr, cr):  # [n, H] each -> h, c [n, H]
        i, o, fl, fr, u = self.compose(torch.cat([hl, hr], dim=1)).chunk(5, dim=1)
        c = torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(fl) * cl + torch.sigmoid(fr) * cr
        return torch.sigmoid(o) * torch.tanh(c), c

    def states_pertree(self, batch):
        """Node by node in post-order: h [n_all, H] and the labels in the same order."""
        hs, labels = [], []
        for nodes, ids in batch:
            h, c = [None] * len(nodes), [None] * len(nodes)
            for k, (label, word, kids) in enumerate(nodes):
                if word is not None:
                    h[k], c[k] = self.leaves(self.embedding(ids[k:k + 1]))
                else:
                    (a, b) = kids
                    h[k], c[k] = self.inner(h[a], c[a], h[b], c[b])
                labels.append(label)
            hs.extend(h)
        return torch.cat(hs, dim=0), labels

    def states_level(self, plan):
        """Every node of one height in one product; `plan` from level_plan(). h [n_all, H] in the
        plan's row order (leaves, then height 1, 2, ...)."""
        words, levels = plan
        all_h, all_c = self.leaves(self.embedding(words))  # [leaves, H]
        for left, right in levels:
            h, c = self.inner(all_h[left], all_c[left], all_h[right], all_c[right])
            all_h = torch.cat([all_h, h], dim=0)
            all_c = torch.cat([all_c, c], dim=0)
        return all_h

    def loss(self, h, labels, trees, l2):
        logits = self.classifier(self.dropout(h))
        loss = F.cross_entropy(logits, labels, reduction="sum") / trees
        sq = sum((p * p).sum() for n, p in self.named_parameters() if not n.startswith("embedding"))
        return loss + 0.5 * l2 * sq


def level_plan(batch):
    """Node rows in height order (leaves first): word ids of the leaves, and per height the rows
    of the left and right children and the labels; built once per batch, outside the clock."""
    height, order = [], []
    for t, (nodes, _) in enumerate(batch):
        hts = []
        for label, word, kids in nodes:
            hts.append(0 if word is not None else 1 + max(hts[k] for k in kids))
        height.append(hts)
        order += [(hts[k], t, k) for k in range(len(nodes))]
    order.sort()
    row = {(t, k): r for r, (_, t, k) in enumerate(order)}
    top = max(hh for hh, _, _ in order)
    words = torch.tensor([batch[t][1][k].item() for hh, t, k in order if hh == 0], dtype=torch.long)
    labels = [batch[t][0][k][0] for _, t, k in order]
    levels = []
    for lv in range(1, top + 1):
        nodes = [(t, k) for hh, t, k in order if hh == lv]
        left = torch.tensor([row[(t, batch[t][0][k][2][0])] for t, k in nodes], dtype=torch.long)
        right = torch.tensor([row[(t, batch[t][0][k][2][1])] for t, k in nodes], dtype=torch.long)
        levels.append((left, right))
    return (words, levels), torch.tensor(labels, dtype=torch.long)


def measure(trees, vocab, args, mode, threads):
    torch.manual_seed(args.seed)
    model = TreeLstm(len(vocab) + 4, args.embed, args.hidden, args.classes)
    emb = [p for n, p in model.named_parameters() if n.startswith("embedding")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("embedding")]
    opt = torch.optim.Adagrad([{"params": rest, "lr": args.lr}, {"params": emb, "lr": args.embed_lr}],
                              lr=args.lr, eps=1e-8)
    encoded = [(t, torch.tensor([vocab.get(w, 1) if w is not None else 0 for _, w, _ in t], dtype=torch.long))
               for t in trees]
    batches = [encoded[i:i + args.batch] for i in range(0, len(encoded), args.batch)]
    # The batches' index tensors and level plans are built before the clock starts.
    plans = [level_plan(b) if mode == "level" else None for b in batches]
    pertree_labels = [torch.tensor([lab for nodes, _ in b for lab, _, _ in nodes], dtype=torch.long)
                      for b in batches]
    model.train()
    times = []
    total = args.warmup + args.batches
    for step in range(total):
        k = step % len(batches)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        if mode == "level":
            (plan, labels) = plans[k]
            h = model.states_level(plan)
        else:
            h, _ = model.states_pertree(batches[k])
            labels = pertree_labels[k]
        loss = model.loss(h, labels, len(batches[k]), args.l2)
        loss.backward()
        opt.step()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    return {"exec": mode, "threads": threads, "epoch_s": med * len(trees) / args.batch,
            "batch_ms": 1e3 * med, "min_ms": 1e3 * min(times), "max_ms": 1e3 * max(times), "batches": len(times),
            "loss": float(loss)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generate", help="write random trees to DIR/{train,dev,test}.txt and exit")
    ap.add_argument("--trees", type=int, default=1000, help="--generate: training trees")
    ap.add_argument("--leaves", type=int, default=20, help="--generate: leaves per tree")
    ap.add_argument("--words", type=int, default=16000, help="--generate: words drawn from")
    ap.add_argument("--data", help="PTB tree file to train on (e.g. DIR/train.txt)")
    ap.add_argument("--exec", default="pertree,level", help="executions to time: pertree, level")
    ap.add_argument("--threads", default="1,2", help="thread counts (the best is the bar)")
    ap.add_argument("--batch", type=int, default=25)
    ap.add_argument("--embed", type=int, default=300)
    ap.add_argument("--hidden", type=int, default=150)
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--embed-lr", type=float, default=0.1)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--batches", type=int, default=20, help="timed updates per measurement")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.generate:
        if args.trees < 1 or args.leaves < 1 or args.words < 1:
            sys.exit("tree_lstm.py: --trees, --leaves and --words must be >= 1")
        generate(args.generate, args.trees, args.leaves, args.words, args.seed)
        return 0
    if not args.data:
        sys.exit("tree_lstm.py: --data FILE (or --generate DIR) is required")
    trees, vocab = load(args.data)
    modes = args.exec.split(",")
    if any(m not in ("pertree", "level") for m in modes):
        sys.exit(f"tree_lstm.py: --exec {args.exec}: expected pertree and/or level")
    openblas = openblas_handle()
    meta = {"torch": torch.__version__, "libraries": loaded_libraries(), "malloc": MALLOC,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "openblas": openblas.openblas_get_config().decode() if openblas else None,
            "openblas_core": openblas.openblas_get_corename().decode() if openblas else None,
            "trees": len(trees), "nodes": sum(len(t) for t in trees), "vocab": len(vocab) + 4}
    print(json.dumps({"meta": meta}), flush=True)
    for mode in modes:
        for threads in [int(t) for t in args.threads.split(",")]:
            torch.set_num_threads(threads)
            if openblas is not None:
                openblas.openblas_set_num_threads(threads)
            print(json.dumps(measure(trees, vocab, args, mode, threads)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
