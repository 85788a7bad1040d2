#!/usr/bin/python3
"""The PyTorch side of `bench/multi30k_throughput.sh`: an engram seq2seq checkpoint translating a file.

It reads the checkpoint engram wrote (`config.yaml`, `model.safetensors`, the SentencePiece
model(s)) into the same network in PyTorch and translates stdin-like input (a file of source lines)
the way `engram translate` does, so that both sides decode the same model to the same outputs:

- the network: source embedding -> bidirectional GRU (packed, so each sentence's own length) ->
  decoder state s0 = tanh(W_bridge [h_fwd; h_bwd]); additive attention with keys W_k h_i made once
  per batch, score v . tanh(W_q s_{t-1} + k_i), masked softmax, c_t = sum_i alpha_ti h_i; a GRU
  cell over [e_{t-1}; c_t]; readout tanh(W_p [s_t; c_t; e_{t-1}]) -> W_o -> log-softmax
  (Bahdanau style, one layer each way: the only layout this peer accepts; anything else is an
  error naming the config key);
- the job: sources sorted by length and cut into batches of --batch, decoded to <eos> or
  floor(2 * source length) + 10 tokens (engram's default cap), finished rows dropped from the
  batch at every step, output restored to input order;
- greedy, or beam search with engram's rules (decode/beam_search.cc): per sentence the 2K best
  extensions ranked, an <eos> inside the first K ends a hypothesis, K live prefixes kept, a
  sentence done when K hypotheses ended and its best live prefix scores no better than the K-th,
  length penalty ((5 + n) / 6)^alpha;
- precisions: fp32; bf16 (the model cast to bfloat16, log-probabilities taken in float32 for the
  search); int8 (torch.ao.quantization.quantize_dynamic over the Linear, GRU and GRUCell modules,
  per-channel weights on the `onednn` engine when Debian's build has it, else the default);
- --shortlist FILE (engram's shortlist.tsv, models/seq2seq/shortlist.h): each batch scores only
  the union of the special ids, the frequent tokens and its source tokens' lists; the output layer
  multiplies those rows of W_o (gathered once per batch from the fp32 weights, in fp32, as engram
  does), and the search picks among them.

Prints one JSON line: {"sentences", "target_tokens", "seconds", "threads", "precision", ...}; the
timed part is tokenising, decoding and detokenising (loading the checkpoint is not timed). With
--profile, a second pass runs under torch.profiler and "split" gives the shares of the timed pass in
products / element-wise / softmax / search ops (each op's self CPU time in the profiled pass), the rest
Python (the search's bookkeeping, the interpreter, dispatch outside the ops). The
hypotheses go to --output. Dims: B batch, N live rows, S source length, C = 2U encoder width,
H decoder hidden, A attention width, E embedding, P readout, V target vocabulary, K beam.
"""
import argparse
import json
import os
import struct
import sys
import time

from torch_env import MALLOC, loaded_libraries, openblas_handle  # noqa: E402  (tunes malloc before torch loads)

import sentencepiece  # noqa: E402
import torch  # noqa: E402  (after mallopt)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import yaml  # noqa: E402
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence  # noqa: E402

GO, EOS = 2, 3
DTYPES = {"F32": torch.float32}


def fail(msg):
    sys.exit(f"translate.py: {msg}")


def read_safetensors(path):
    """name -> float32 tensor, from the safetensors layout (8-byte header length, JSON header, data)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] not in DTYPES:
            fail(f"{path}: tensor {name} has dtype {meta['dtype']}, expected F32")
        b, e = meta["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[b:e]), dtype=DTYPES[meta["dtype"]]).reshape(meta["shape"])
    return out


class Translator(nn.Module):
    def __init__(self, cfg, w):
        super().__init__()
        want = {"cell": "gru", "attention": "additive", "style": "bahdanau", "bidirectional": True,
                "encoder_layers": 1, "decoder_layers": 1, "tie_embeddings": False}
        for key, value in want.items():
            if cfg.get(key) != value:
                fail(f"config key {key} is {cfg.get(key)!r}; this peer implements {value!r} only")
        e, h = cfg["embed_dim"], cfg["hidden"]
        units = w["encoder/rnn/l0/w_hh"].shape[1]
        c, a = 2 * units, w["decoder/attention/w_key"].shape[0]
        p, v = w["decoder/readout/weight"].shape[0], w["decoder/output/weight"].shape[0]
        self.src_embed = nn.Embedding.from_pretrained(w["encoder/embed/weight"])
        self.tgt_embed = nn.Embedding.from_pretrained(w["decoder/embed/weight"])
        self.encoder = nn.GRU(e, units, bidirectional=True)
        for suffix, name in (("", "l0"), ("_reverse", "l0_reverse")):
            for ours, theirs in (("weight_ih", "w_ih"), ("weight_hh", "w_hh"), ("bias_ih", "b_ih"), ("bias_hh", "b_hh")):
                getattr(self.encoder, f"{ours}_l0{suffix}").data.copy_(w[f"encoder/rnn/{name}/{theirs}"])
        self.bridge = self.linear(w, "bridge", c, h)
        self.key = self.linear(w, "decoder/attention/w_key", c, a, bias=False)
        self.query = self.linear(w, "decoder/attention/w_query", h, a, bias=False)
        self.v = nn.Parameter(w["decoder/attention/v"].t().contiguous())  # [A, 1]
        self.cell = nn.GRUCell(e + c, h)
        self.cell.weight_ih.data.copy_(torch.cat([w["decoder/rnn/l0/w_ih"], w["decoder/w_ctx"]], dim=1))
        self.cell.weight_hh.data.copy_(w["decoder/rnn/l0/w_hh"])
        self.cell.bias_ih.data.copy_(w["decoder/rnn/l0/b_ih"])
        self.cell.bias_hh.data.copy_(w["decoder/rnn/l0/b_hh"])
        self.readout = self.linear(w, "decoder/readout", h + c + e, p)
        self.output = self.linear(w, "decoder/output", p, v)
        self.out_w, self.out_b = w["decoder/output/weight"], w["decoder/output/bias"]  # fp32, for shortlists
        used = {"encoder/embed/weight", "decoder/embed/weight", "decoder/attention/v", "decoder/w_ctx",
                "bridge/weight", "bridge/bias", "decoder/attention/w_key", "decoder/attention/w_query",
                "decoder/readout/weight", "decoder/readout/bias", "decoder/output/weight", "decoder/output/bias"}
        used |= {n for n in w if n.startswith("encoder/rnn/") or n.startswith("decoder/rnn/")}
        if set(w) != used:
            fail(f"checkpoint tensors this peer does not know: {sorted(set(w) - used)}")

    @staticmethod
    def linear(w, name, n_in, n_out, bias=True):
        weight = w[name] if not bias else w[f"{name}/weight"]
        lin = nn.Linear(n_in, n_out, bias=bias)
        lin.weight.data.copy_(weight)
        if bias:
            lin.bias.data.copy_(w[f"{name}/bias"])
        return lin

    def encode(self, src, lens):
        """src [S, B] ids, lens [B] -> values [B, S, C], keys [B, S, A], mask [B, S], s0 [B, H]."""
        packed = pack_padded_sequence(self.src_embed(src).to(self.v.dtype), lens, enforce_sorted=False)
        out, h = self.encoder(packed)
        values = pad_packed_sequence(out)[0].transpose(0, 1).contiguous()
        mask = torch.arange(values.shape[1]).unsqueeze(0) < lens.unsqueeze(1)
        return values, self.key(values), mask, torch.tanh(self.bridge(torch.cat([h[0], h[1]], dim=1)))

    def step(self, prev, s, values, keys, mask, sub=None):
        """prev [N] ids, s [N, H] -> log-probabilities [N, V] (float32), s_t [N, H]; with `sub`
        = (W_o rows [V', P], b_o [V']) of a shortlist, [N, V'] over those classes."""
        emb = self.tgt_embed(prev).to(self.v.dtype)
        score = torch.matmul(torch.tanh(keys + self.query(s).unsqueeze(1)), self.v).squeeze(2)  # [N, S]
        alpha = F.softmax(score.masked_fill(~mask, float("-inf")), dim=1)
        ctx = torch.bmm(alpha.unsqueeze(1), values).squeeze(1)  # [N, C]
        s = self.cell(torch.cat([emb, ctx], dim=1), s)
        readout = torch.tanh(self.readout(torch.cat([s, ctx, emb], dim=1)))
        logits = self.output(readout) if sub is None else torch.addmm(sub[1], readout.float(), sub[0].t())
        return F.log_softmax(logits.float(), dim=1), s


def greedy(model, src, lens, max_len, sub=None, ids=None):
    """`sub`, `ids`: a shortlist's W_o rows and bias, and the target id of each of its classes."""
    values, keys, mask, s = model.encode(src, lens)
    rows = list(range(src.shape[1]))
    out = [[] for _ in rows]
    prev = torch.full((len(rows),), GO, dtype=torch.long)
    while rows:
        lp, s = model.step(prev, s, values, keys, mask, sub)
        tokens = lp.argmax(1) if ids is None else ids[lp.argmax(1)]
        keep = []
        for i, (r, tok) in enumerate(zip(rows, tokens.tolist())):
            if tok == EOS:
                continue
            out[r].append(tok)
            if len(out[r]) < max_len[r]:
                keep.append(i)
        if len(keep) != len(rows):  # finished rows leave the batch
            idx = torch.tensor(keep, dtype=torch.long)
            s, values, keys, mask, tokens = s[idx], values[idx], keys[idx], mask[idx], tokens[idx]
            rows = [rows[i] for i in keep]
        prev = tokens
    return out


def beam(model, src, lens, k, max_len, alpha, sub=None, ids=None):
    values, keys, mask, s = model.encode(src, lens)
    b = src.shape[1]
    active, count = list(range(b)), [1] * b  # live sentences; rows per live sentence (1, then k)
    row_lp = torch.zeros(b, dtype=torch.float64)
    row_node = [-1] * b
    node_tok, node_parent = [], []
    ended = [[] for _ in range(b)]  # (score, -order, node) of finished / cut hypotheses
    prev = torch.full((b,), GO, dtype=torch.long)
    id_list = None if ids is None else ids.tolist()
    t = 0
    while active:
        lp, s = model.step(prev, s, values, keys, mask, sub)
        c = count[active[0]]
        v = lp.shape[1]
        total = (row_lp.unsqueeze(1) + lp.double()).view(len(active), c * v)
        best_lp, best_idx = total.topk(min(2 * k, c * v), dim=1)
        level = t + 1
        pen = ((5.0 + level) / 6.0) ** alpha
        keep_rows, keep_tok, keep_lp, keep_node, next_active = [], [], [], [], []
        for a, (sent, lps, idxs) in enumerate(zip(active, best_lp.tolist(), best_idx.tolist())):
            first = len(keep_rows)
            alive = 0
            for rank, (score, ix) in enumerate(zip(lps, idxs)):
                if alive == k:
                    break
                row, tok = a * c + ix // v, ix % v if ids is None else id_list[ix % v]
                if tok == EOS:
                    if rank < k:
                        ended[sent].append((score / pen, -len(ended[sent]), row_node[row]))
                    continue
                node_tok.append(tok)
                node_parent.append(row_node[row])
                keep_rows.append(row)
                keep_tok.append(tok)
                keep_lp.append(score)
                keep_node.append(len(node_tok) - 1)
                alive += 1
            done = alive == 0
            if not done and level >= max_len[sent]:  # out of length: live prefixes end unfinished
                ended[sent].extend((keep_lp[i] / pen, -len(ended[sent]) - i, keep_node[i])
                                   for i in range(first, len(keep_rows)))
                done = True
            if not done and len(ended[sent]) >= k:
                kth = sorted((e[0] for e in ended[sent]), reverse=True)[k - 1]
                done = keep_lp[first] / pen <= kth
            if done:
                del keep_rows[first:], keep_tok[first:], keep_lp[first:], keep_node[first:]
            else:
                next_active.append(sent)
                if alive != k:
                    fail(f"sentence {sent}: {alive} live prefixes, expected {k}")
        for sent in next_active:
            count[sent] = k
        active = next_active
        if not active:
            break
        idx = torch.tensor(keep_rows, dtype=torch.long)
        s, values, keys, mask = s[idx], values[idx], keys[idx], mask[idx]
        prev = torch.tensor(keep_tok, dtype=torch.long)
        row_lp = torch.tensor(keep_lp, dtype=torch.float64)
        row_node = keep_node
        t += 1
    out = []
    for sent in range(b):
        score, _, node = max(ended[sent])
        ids = []
        while node >= 0:
            ids.append(node_tok[node])
            node = node_parent[node]
        out.append(ids[::-1])
    return out


def load(model_dir, precision):
    with open(os.path.join(model_dir, "config.yaml")) as f:
        top = yaml.safe_load(f)
    if top.get("model") != "seq2seq":
        fail(f"{model_dir}: model {top.get('model')!r}, expected seq2seq")
    cfg = top["config"]
    model = Translator(cfg, read_safetensors(os.path.join(model_dir, "model.safetensors"))).eval()
    tok = cfg["tokenizer"]
    if tok.get("unit") != "spm" or tok.get("lowercase"):
        fail("tokenizer: this peer reads cased SentencePiece models only")
    names = ("joint.spm", "joint.spm") if tok.get("joint") else ("src.spm", "tgt.spm")
    spm = [sentencepiece.SentencePieceProcessor(model_file=os.path.join(model_dir, n)) for n in names]
    if precision == "bf16":
        model = model.to(torch.bfloat16)
    elif precision == "int8":
        if "onednn" in torch.backends.quantized.supported_engines:
            torch.backends.quantized.engine = "onednn"
        model = torch.ao.quantization.quantize_dynamic(model, {nn.Linear, nn.GRU, nn.GRUCell}, dtype=torch.qint8)
    return model, spm[0], spm[1]


def read_shortlist(path, src_spm, tgt_spm):
    """(frequent ids, {source id: target ids}) of an engram shortlist.tsv."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines or lines[0] != "engram-shortlist 1":
        fail(f"{path}: not an engram shortlist")
    frequent, by_source = None, {}
    for n, line in enumerate(lines[1:], 2):
        key, _, toks = line.partition("\t")
        ids = [tgt_spm.piece_to_id(t) for t in toks.split()]
        if key == "*":
            frequent = ids
        else:
            by_source[src_spm.piece_to_id(key)] = ids
    if frequent is None:
        fail(f"{path}: no '*' line")
    return frequent, by_source


@torch.no_grad()
def translate(model, src_spm, tgt_spm, lines, batch, k, alpha, shortlist=None):
    ids = [src_spm.encode(line) for line in lines]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    hyps = [None] * len(ids)
    for start in range(0, len(order), batch):
        chunk = order[start:start + batch]
        lens = torch.tensor([max(1, len(ids[i])) for i in chunk])
        src = torch.zeros(int(lens.max()), len(chunk), dtype=torch.long)
        for j, i in enumerate(chunk):
            src[:len(ids[i]), j] = torch.tensor(ids[i], dtype=torch.long)
        max_len = [max(1, min(256, 2 * len(ids[i]) + 10)) for i in chunk]
        sub = out_ids = None
        if shortlist is not None:
            keep = set(range(4)) | set(shortlist[0])
            for i in chunk:
                for s_id in ids[i]:
                    keep.update(shortlist[1].get(s_id, ()))
            out_ids = torch.tensor(sorted(keep), dtype=torch.long)
            sub = (model.out_w[out_ids], model.out_b[out_ids])
        outs = greedy(model, src, lens, max_len, sub, out_ids) if k == 1 else \
            beam(model, src, lens, k, max_len, alpha, sub, out_ids)
        for i, out in zip(chunk, outs):
            hyps[i] = out
    return hyps, [tgt_spm.decode(h) for h in hyps]


SPLIT = [("products", r"addmm|::mm$|bmm|matmul|linear|gru|quantized|mkldnn|_convolution"),
         ("softmax", r"softmax"), ("search", r"topk|argmax|sort|max$")]


def profile_split(run, seconds):
    """Shares of the unprofiled run's wall time (`seconds`) by op class: each op's self CPU time in a
    profiled run of the same work; the rest is Python (the profiler's own cost stays out of it)."""
    import re
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    wall = seconds * 1e6
    split = {}
    for ev in prof.key_averages():
        cls = next((c for c, pat in SPLIT if re.search(pat, ev.key)), "element-wise")
        split[cls] = split.get(cls, 0.0) + ev.self_cpu_time_total
    split["python (bookkeeping, interpreter)"] = max(0.0, wall - sum(split.values()))
    return {k: round(v / wall, 4) for k, v in sorted(split.items())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="engram seq2seq model directory")
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.0)
    ap.add_argument("--precision", choices=("fp32", "bf16", "int8"), default="fp32")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--profile", action="store_true", help="add the time split of a second, profiled pass")
    ap.add_argument("--shortlist", help="engram shortlist.tsv: decode each batch over its shortlisted tokens")
    args = ap.parse_args()
    if args.batch < 1 or args.beam < 1 or args.threads < 1:
        fail("--batch, --beam and --threads must be >= 1")
    torch.set_num_threads(args.threads)
    openblas = openblas_handle()
    if openblas is not None:
        openblas.openblas_set_num_threads(args.threads)
    model, src_spm, tgt_spm = load(args.model, args.precision)
    shortlist = read_shortlist(args.shortlist, src_spm, tgt_spm) if args.shortlist else None
    with open(args.input, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    translate(model, src_spm, tgt_spm, lines[:8], args.batch, args.beam, args.alpha, shortlist)  # warm-up
    t0 = time.perf_counter()
    hyps, text = translate(model, src_spm, tgt_spm, lines, args.batch, args.beam, args.alpha, shortlist)
    sec = time.perf_counter() - t0
    with open(args.output, "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in text))
    split = profile_split(lambda: translate(model, src_spm, tgt_spm, lines, args.batch, args.beam, args.alpha, shortlist), sec) \
        if args.profile else None
    print(json.dumps({"split": split, "sentences": len(lines), "target_tokens": sum(len(h) + 1 for h in hyps), "seconds": sec,
                      "threads": args.threads, "precision": args.precision, "batch": args.batch, "beam": args.beam,
                      "torch": torch.__version__, "quantized_engine": torch.backends.quantized.engine,
                      "malloc": MALLOC, "libraries": loaded_libraries()}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
