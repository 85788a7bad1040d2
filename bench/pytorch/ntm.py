#!/usr/bin/python3
"""The PyTorch side of `bench/ntm_speed.sh`: a Neural Turing Machine of the same configuration as
engram's (models/ntm.h) trained on the copy task, measured in training sequences per second.

Same model, maths and update as `build/bench/ntm_speed`: LSTM controller (100 units) fed [x_t; r_{t-1}],
one read and one write head on a 128 x 20 memory initialised to 1e-6, heads addressing the memory
before the step's write, raw head parameters [key | beta^ | g^ | s^ (3) | gamma^] through softplus /
sigmoid / softmax / 1 + softplus, cosine content addressing, interpolation, circular shift -1..1,
sharpening, erase = sigmoid, add linear, output sigmoid(W [h; r]) scored by binary cross-entropy
on the recall steps (summed per sequence, batch mean), gradients clipped element-wise to +-10,
RMSProp (alpha 0.95, momentum 0.9, lr 1e-4). One update = fresh random batch + forward + backward
+ clip + step; lengths cycle 1, 2, ..., 20 (T = 2L + 1 steps), as on the engram side.

Prints one JSON object per line:
  {"meta": {...}}   torch version, BLAS and kernels loaded, malloc tuning
  {"name": "ntm-copy", "batch": B, "threads": n, "seq_per_s": median, "min": x, "max": x, "repeats": r, "steps": s}
Run it as bench/ntm_speed.sh does: /usr/bin/python3 with OPENBLAS_CORETYPE=SkylakeX (PyTorch gets its
best kernels, DESIGN.md "Benchmarking fairly"); glibc malloc is tuned below before torch loads.
Dims: T steps, B batch, I inputs, K outputs, H controller, N slots, M slot width, S shift size.
"""
import argparse
import json
import os
import statistics
import sys
import time

from torch_env import MALLOC, loaded_libraries, openblas_handle  # noqa: E402  (tunes malloc before torch loads)

import torch  # noqa: E402  (after mallopt)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class NTM(nn.Module):
    """x [T, B, I] -> logits [T, B, K]."""

    def __init__(self, inputs, outputs, hidden=100, slots=128, width=20, shift_range=1):
        super().__init__()
        self.n, self.m, self.s = slots, width, 2 * shift_range + 1
        p = width + self.s + 3
        self.controller = nn.LSTMCell(inputs + width, hidden)
        self.read_address = nn.Linear(hidden, p)
        self.write_address = nn.Linear(hidden, p)
        self.erase = nn.Linear(hidden, width)
        self.add = nn.Linear(hidden, width)
        self.read_init = nn.Parameter(torch.randn(width) * 0.01)
        self.output = nn.Linear(hidden + width, outputs)

    def address(self, memory, head, w_prev):
        key, beta, gate, shift, gamma = head.split([self.m, 1, 1, self.s, 1], dim=1)
        beta, gate = F.softplus(beta), torch.sigmoid(gate)
        shift, gamma = F.softmax(shift, dim=1), 1 + F.softplus(gamma)
        wc = F.softmax(beta * F.cosine_similarity(memory, key.unsqueeze(1), dim=2, eps=1e-8), dim=1)  # [B, N]
        wg = gate * wc + (1 - gate) * w_prev
        ws = sum(shift[:, j:j + 1] * torch.roll(wg, j - self.s // 2, dims=1) for j in range(self.s))
        return F.softmax(gamma * torch.log(ws + 1e-12), dim=1)  # sharpening, as softmax(gamma log w)

    def forward(self, x):
        steps, b, _ = x.shape
        memory = torch.full((b, self.n, self.m), 1e-6)
        w_read = torch.zeros(b, self.n)
        w_read[:, 0] = 1
        w_write = w_read
        reads = self.read_init.expand(b, self.m)
        h = c = torch.zeros(b, self.controller.hidden_size)
        feats = []
        for t in range(steps):
            h, c = self.controller(torch.cat([x[t], reads], dim=1), (h, c))
            w_read = self.address(memory, self.read_address(h), w_read)
            reads = torch.bmm(w_read.unsqueeze(1), memory).squeeze(1)  # [B, M]
            w_write = self.address(memory, self.write_address(h), w_write)
            e, a = torch.sigmoid(self.erase(h)), self.add(h)
            ww = w_write.unsqueeze(2)
            memory = memory * (1 - ww * e.unsqueeze(1)) + ww * a.unsqueeze(1)
            feats.append(torch.cat([h, reads], dim=1))
        return self.output(torch.stack(feats))


def copy_batch(length, batch, bits=8):
    """Copy task: L random vectors, a delimiter step, L blank steps; target = the vectors again."""
    x = torch.zeros(2 * length + 1, batch, bits + 1)
    seq = torch.randint(0, 2, (length, batch, bits)).float()
    x[:length, :, :bits] = seq
    x[length, :, bits] = 1
    return x, seq


def measure(batch, steps, warmup, max_len):
    torch.manual_seed(1)
    model = NTM(9, 8)
    # engram's NTM default is Graves (2013)'s RMSProp: centered, eps under the square root.
    # torch's centered RMSProp is the same work per parameter (it adds eps after the root).
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, alpha=0.95, momentum=0.9, eps=1e-4, centered=True)

    def update(i):
        length = 1 + i % max_len
        x, target = copy_batch(length, batch)
        logits = model(x)[length + 1:]
        loss = F.binary_cross_entropy_with_logits(logits, target, reduction="sum") / batch
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.grad.clamp_(-10, 10)
        opt.step()

    for i in range(warmup):
        update(i)
    t0 = time.perf_counter()
    for i in range(steps):
        update(i)
    return steps * batch / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", default="1,16", help="batch sizes")
    ap.add_argument("--threads", default="1,2", help="thread counts (the best is the bar)")
    ap.add_argument("--steps", type=int, default=100, help="timed updates per measurement")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=1, help="measurements per (batch, threads)")
    ap.add_argument("--max-len", type=int, default=20)
    args = ap.parse_args()
    openblas = openblas_handle()
    meta = {"torch": torch.__version__, "libraries": loaded_libraries(), "malloc": MALLOC,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
            "cpu_capability": torch.backends.cpu.get_cpu_capability()
            if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability") else None,
            "openblas": openblas.openblas_get_config().decode() if openblas else None,
            "openblas_core": openblas.openblas_get_corename().decode() if openblas else None}
    print(json.dumps({"meta": meta}), flush=True)
    for batch in [int(b) for b in args.batch.split(",")]:
        for threads in [int(t) for t in args.threads.split(",")]:
            torch.set_num_threads(threads)
            if openblas is not None:
                openblas.openblas_set_num_threads(threads)
            rates = [measure(batch, args.steps, args.warmup, args.max_len) for _ in range(args.repeats)]
            print(json.dumps({"name": "ntm-copy", "batch": batch, "threads": threads,
                              "seq_per_s": statistics.median(rates), "min": min(rates), "max": max(rates),
                              "repeats": args.repeats, "steps": args.steps}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
