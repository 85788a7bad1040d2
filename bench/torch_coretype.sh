# Sourced (from the repository root) by the bench scripts that run a PyTorch peer. Sets the array
# `coretype`: the env(1) assignment that gives PyTorch's OpenBLAS its best kernels,
# OPENBLAS_CORETYPE=SkylakeX where the CPU has AVX-512, else none (OpenBLAS's own choice; SkylakeX
# forced on a CPU without AVX-512 dies of an illegal instruction). Callers also pass
# `-u OPENBLAS_CORETYPE` to env first, so an inherited value never reaches PyTorch.
# (An if, not `grep && ...`: as a sourced file's last command a failed grep would end a
# `set -e` caller.)
coretype=()
if grep -qw avx512f /proc/cpuinfo; then coretype=(OPENBLAS_CORETYPE=SkylakeX); fi
