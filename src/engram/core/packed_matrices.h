// PackedMatrices<T>: copies of some weight matrices of a flat parameter buffer in a kernel's
// packed layout, found by the address of each matrix's first fp32 value. The storage behind
// Bf16Weights' packed bf16 copies, Int8Weights' int8 ones and PackedWeights' packed fp32 ones; the
// layout itself is the kernel's (kernels/blas.h pack_bf16_pairs, pack_f32; kernels/gemm_int8.h pack_int8).
// Dims: P parameters in the buffer.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <unordered_map>
#include <vector>

#include "engram/core/error.h"

namespace engram::core {

struct WeightMatrix {  // a weight W [rows, cols] stored at values + offset
  int64_t offset;
  int rows, cols;
};

struct WeightBuffer {  // a flat parameter buffer and the weight matrices in it
  std::span<const float> values;     // [P]
  std::vector<WeightMatrix> matrices;  // offsets into values
};

template <class T>
class PackedMatrices {
 public:
  PackedMatrices() = default;
  // size(n, k): packed values of an [n, k] matrix; pack(w, n, k, out) writes them. `what` names
  // the owner in errors.
  template <class Size, class Pack>
  PackedMatrices(std::span<const float> values, std::span<const WeightMatrix> matrices, const char* what, Size size,
                 Pack pack) {
    int64_t total = 0;
    for (const WeightMatrix& m : matrices) {
      ENGRAM_CHECK(m.offset >= 0 && m.rows > 0 && m.cols > 0 &&
                       m.offset + int64_t{m.rows} * m.cols <= static_cast<int64_t>(values.size()),
                   "{}: matrix [{}, {}] at {} outside the {} values", what, m.rows, m.cols, m.offset, values.size());
      total += size(m.rows, m.cols);
    }
    // calloc: a large block is fresh zero pages, written once by pack (no zero-fill pass first).
    data_.reset(static_cast<T*>(std::calloc(static_cast<size_t>(total), sizeof(T))));
    if (total > 0 && !data_) throw std::bad_alloc();
    int64_t at = 0;
    for (const WeightMatrix& m : matrices) {
      pack(values.data() + m.offset, m.rows, m.cols, data_.get() + at);
      index_.emplace(values.data() + m.offset, Entry{at, m.rows, m.cols});
      at += size(m.rows, m.cols);
    }
  }
  // The packed copy of the listed matrix [n, k] starting at `p`, or nullptr.
  const T* find(const float* p, int n, int k) const {
    const auto it = index_.find(p);
    if (it == index_.end() || it->second.rows != n || it->second.cols != k) return nullptr;
    return data_.get() + it->second.at;
  }

 private:
  struct Entry {
    int64_t at;  // index into data_
    int rows, cols;
  };
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;                  // every listed matrix, packed

  std::unordered_map<const float*, Entry> index_;  // by the matrix's first fp32 value
};

}  // namespace engram::core
