#!/usr/bin/python3
"""Where a decoding process spends its CPU: `perf report` samples of one perf.data file sorted into
products / element-wise / softmax / search / memory & kernel / interpreter & dispatch / other,
by the shared object and symbol of each sample. Used by bench/multi30k_throughput.sh (PROFILE=1)
for both sides alike.

Rules, first match wins (symbol, then shared object):
- products: BLAS / oneDNN / Eigen product kernels, engram's packed, bf16 and int8 kernels (with
  the int8 kernel's per-row quantization of its inputs), and
  JIT code (oneDNN generates its kernels at run time: perf sees them as [JIT] / unknown);
- softmax: (log-)softmax kernels;
- search: top-k, sort, arg-max, engram's decode/ and beam bookkeeping;
- memory & kernel: memcpy / memset, allocation, the OS kernel (page faults, scheduling);
- interpreter & dispatch: libpython and PyTorch's dispatcher, autograd and tensor bookkeeping
  (c10 / at:: wrappers that are not a kernel);
- element-wise: the rest of engram's or libtorch's math (tanh, sigmoid, GRU gates, adds, copies of
  slices, embedding lookups);
- other: everything else (libc, the loader, SentencePiece).

Usage: perf_split.py PERF_DATA  -> one JSON line {"products": share, ...} (shares sum to 1).
"""
import json
import re
import subprocess
import sys

RULES = [
    ("products", r"gemm|gemv|f32_packed|packed_block|bf16_block|block_rows|quantize_rows|pack_(int8|bf16|f32)|"
                 r"int8|vnni|dnnl|mkldnn|ideep|onednn|"
                 r"general_matrix|gebp|gemm_pack|sdot|_kernel_[a-z0-9_]*(sgemm|bgemm)|fbgemm|addmm|dot_"),
    ("softmax", r"softmax"),
    ("search", r"top_?k|topk|sort|argmax|arg_max|decode::|beam|select_|nth_element"),
    ("memory & kernel", r"memmove|memcpy|memset|malloc|free|_int_|calloc|realloc|page|mmap|munmap"),
    ("interpreter & dispatch", r"^_?Py|^PyEval|c10::|at::native::empty|Dispatcher|autograd|TensorImpl|intrusive_ptr|"
                               r"TensorIterator|Tensor::|OperatorHandle|BoxedKernel|torch::"),
]
DSO_RULES = [
    ("products", r"^\[JIT\]|^\[unknown\]$|libdnnl|libopenblas|libblas|libmkl"),
    ("memory & kernel", r"kernel\.kallsyms"),
    ("interpreter & dispatch", r"python3|libpython"),
    ("element-wise", r"^engram$|libtorch_cpu|_engram|libgomp|libsleef|libm\.so"),
]


def classify(dso, sym):
    for name, pat in RULES:
        if re.search(pat, sym):
            return name
    for name, pat in DSO_RULES:
        if re.search(pat, dso):
            return name
    return "other"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: perf_split.py PERF_DATA")
    rep = subprocess.run(["perf", "report", "-i", sys.argv[1], "--stdio", "--sort", "dso,sym", "-F",
                          "overhead,dso,sym", "--percent-limit", "0"], capture_output=True, text=True)
    if rep.returncode != 0:
        sys.exit(f"perf_split.py: perf report failed: {rep.stderr.strip().splitlines()[-1:]}")
    shares = {}
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\[JIT\] tid \d+|\S+)\s+\[[.k]\]\s+(.*)$", line)
        if not m:
            continue
        cls = classify(m.group(2), m.group(3))
        shares[cls] = shares.get(cls, 0.0) + float(m.group(1)) / 100
    total = sum(shares.values())
    if total <= 0:
        sys.exit(f"perf_split.py: no samples in {sys.argv[1]}")
    print(json.dumps({k: round(v / total, 4) for k, v in sorted(shares.items())}))


if __name__ == "__main__":
    main()
