// ParamStore implementation.
#include "engram/nn/param_store.h"

#include "engram/core/arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

namespace engram::nn {

namespace {
thread_local const ParamBudgetOnThisThread* budget = nullptr;
}  // namespace

ParamBudgetOnThisThread::ParamBudgetOnThisThread(int64_t floats, std::string what)
    : floats_(floats), what_(std::move(what)), was_(std::exchange(budget, this)) {}
ParamBudgetOnThisThread::~ParamBudgetOnThisThread() { budget = was_; }

ZeroedFloats::ZeroedFloats(const ZeroedFloats& other) {
  grow(other.size_);
  if (size_) std::memcpy(data_, other.data_, sizeof(float) * size_);
}

ZeroedFloats& ZeroedFloats::operator=(const ZeroedFloats& other) {
  if (this != &other) *this = ZeroedFloats(other);
  return *this;
}

ZeroedFloats::ZeroedFloats(ZeroedFloats&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

ZeroedFloats& ZeroedFloats::operator=(ZeroedFloats&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(mapped_, other.mapped_);
  return *this;
}

ZeroedFloats::~ZeroedFloats() {
  if (data_) ::munmap(data_, mapped_);
}

void ZeroedFloats::grow(size_t n) {
  ENGRAM_CHECK(n >= size_, "ZeroedFloats::grow: {} < {}", n, size_);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t bytes = (sizeof(float) * n + page - 1) / page * page;
  if (bytes > mapped_) {
    void* p = data_ ? ::mremap(data_, mapped_, bytes, MREMAP_MAYMOVE)
                    : ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    data_ = static_cast<float*>(p);
    mapped_ = bytes;
  }
  size_ = n;
}

ParamId ParamStore::add(const std::string& name, Shape shape) {
  ENGRAM_CHECK(!name.empty(), "parameter with an empty name");
  ENGRAM_CHECK(!index_.count(name), "duplicate parameter name '{}'", name);
  const int64_t offset = static_cast<int64_t>(values_.size());
  // The element count, saturated where the dimensions' product passes int64 (a config's width
  // of 2^31 squared): such a shape is then refused below as too large, never wrapped.
  int64_t count = 1;
  for (int i = 0; i < shape.rank(); ++i) {
    ENGRAM_CHECK(shape[i] >= 0, "parameter '{}': negative dimension in {}", name, shape.str());
    if (__builtin_mul_overflow(count, int64_t{shape[i]}, &count)) count = INT64_MAX;
  }
  const double total = static_cast<double>(offset) + static_cast<double>(count);
  ENGRAM_CHECK(!budget || count <= budget->floats_ - offset,
               "{} holds {} parameters, but the model its config describes has more ({:.0f} at '{}' of shape {})",
               budget->what_, budget->floats_, total, name, shape.str());
  // Parameters past core::memory_limit() would be killed by the kernel while they are
  // initialised: refused before they are mapped.
  const int64_t most = static_cast<int64_t>(core::memory_limit() / sizeof(float));
  ENGRAM_CHECK(count <= most - offset,
               "the model's parameters need more than {:.2f} GiB ({:.0f} floats at '{}' of shape {}), over the limit of "
               "3/4 of this machine's memory: a smaller config",
               total * sizeof(float) / (1024.0 * 1024.0 * 1024.0), total, name, shape.str());
  params_.push_back({name, shape, offset});
  values_.grow(values_.size() + static_cast<size_t>(shape.numel()));
  const auto id = static_cast<ParamId>(params_.size() - 1);
  index_[name] = id;
  return id;
}

std::optional<ParamId> ParamStore::find(const std::string& name) const {
  auto it = index_.find(name);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void ParamStore::zero_grad() {
  if (grads_.size() == values_.size())
    std::fill_n(grads_.data(), grads_.size(), 0.0f);
  else
    grads();  // allocated as zeros
}

void ParamStore::copy_values_from(const ParamStore& other) {
  ENGRAM_CHECK(other.count() == count(), "parameter count differs: {} vs {}", other.count(), count());
  for (const Param& p : params_) {
    auto id = other.find(p.name);
    ENGRAM_CHECK(id.has_value(), "parameter '{}' missing in source", p.name);
    ENGRAM_CHECK(other.shape(*id) == p.shape, "parameter '{}' has shape {} vs {}", p.name, other.shape(*id), p.shape);
    std::memcpy(values_.data() + p.offset, other.values_.data() + other.offset(*id), sizeof(float) * p.shape.numel());
  }
}

namespace {
std::vector<core::WeightMatrix> matrices_of(const ParamStore& store) {
  std::vector<core::WeightMatrix> matrices;
  for (ParamId id = 0; id < store.count(); ++id) {
    const Shape& s = store.shape(id);
    if (s.rank() == 2) matrices.push_back({store.offset(id), s[0], s[1]});
  }
  return matrices;
}

// Each store's values [P] and its rank-2 parameters.
std::vector<core::WeightBuffer> buffers_of(std::span<const ParamStore* const> stores) {
  std::vector<core::WeightBuffer> buffers;
  for (const ParamStore* store : stores)
    buffers.push_back({std::span<const float>(store->values(), static_cast<size_t>(store->numel())),
                       matrices_of(*store)});
  return buffers;
}
}  // namespace

core::Bf16Weights bf16_weights(const ParamStore& store) {
  const ParamStore* one = &store;
  return core::Bf16Weights(buffers_of(std::span(&one, 1)));
}

core::Bf16Weights bf16_weights(std::span<const ParamStore* const> stores) {
  return core::Bf16Weights(buffers_of(stores));
}

core::Int8Weights int8_weights(const ParamStore& store) {
  const ParamStore* one = &store;
  return core::Int8Weights(buffers_of(std::span(&one, 1)));
}

core::Int8Weights int8_weights(std::span<const ParamStore* const> stores) {
  return core::Int8Weights(buffers_of(stores));
}

core::PackedWeights packed_weights(const ParamStore& store) {
  return core::PackedWeights(std::span<const float>(store.values(), static_cast<size_t>(store.numel())),
                             matrices_of(store));
}

}  // namespace engram::nn
