"""What every PyTorch benchmark script here shares: glibc malloc tuned at import (import this
module before torch, DESIGN.md "Benchmarking fairly"), and a look at the BLAS the process loaded.
"""
import ctypes
import os

# ---- glibc malloc: keep freed memory instead of unmapping / trimming it.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
_libc = ctypes.CDLL("libc.so.6")
MALLOC = {}
for _want in (256 << 20, 32 << 20):  # glibc refuses mmap thresholds above HEAP_MAX/2 = 32 MiB
    if _libc.mallopt(M_MMAP_THRESHOLD, _want) == 1:
        MALLOC["M_MMAP_THRESHOLD"] = _want
        break
MALLOC["M_TRIM_THRESHOLD"] = (1 << 30) if _libc.mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1 else "refused"


def loaded_libraries():
    """Paths of the BLAS / OpenMP / allocator libraries mapped into this process."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if "/" in line else ""
            if any(k in path for k in ("blas", "lapack", "dnnl", "gomp", "jemalloc", "mkl")):
                libs.add(path)
    return sorted(libs)


def openblas_handle():
    """ctypes handle of the OpenBLAS this process loaded (through libblas.so.3), or None."""
    for path in loaded_libraries():
        if "libopenblas" in os.path.basename(path):
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            return lib
    return None
