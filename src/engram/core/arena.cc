// Arena implementation: 64-byte aligned blocks, merged on reset.
#include "engram/core/arena.h"

#include <cstdlib>
#include <new>

namespace engram::core {

namespace {
constexpr size_t kAlign = 64;
size_t round_up(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }
void free_block(std::byte* p) { std::free(p); }
}  // namespace

Arena::Block Arena::make_block(size_t bytes) {
  bytes = round_up(bytes);
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kAlign, bytes));
  if (!p) throw std::bad_alloc();
  Block b;
  b.mem = std::unique_ptr<std::byte[], void (*)(std::byte*)>(p, free_block);
  b.size = bytes;
  return b;
}

Arena::Arena(size_t initial_bytes) { blocks_.push_back(make_block(initial_bytes)); }

void* Arena::allocate(size_t bytes) {
  bytes = round_up(bytes == 0 ? 1 : bytes);
  used_total_ += bytes;
  while (true) {
    Block& b = blocks_[current_];
    if (offset_ + bytes <= b.size) {
      void* p = b.mem.get() + offset_;
      offset_ += bytes;
      return p;
    }
    if (current_ + 1 < blocks_.size()) {
      ++current_;
      offset_ = 0;
      continue;
    }
    size_t grow = b.size * 2 > bytes ? b.size * 2 : bytes;
    blocks_.push_back(make_block(grow));
    ++current_;
    offset_ = 0;
  }
}

void Arena::reset() {
  if (blocks_.size() > 1) {
    size_t total = 0;
    for (auto& b : blocks_) total += b.size;
    blocks_.clear();
    blocks_.push_back(make_block(total));
  }
  current_ = 0;
  offset_ = 0;
  used_total_ = 0;
}

size_t Arena::capacity() const {
  size_t total = 0;
  for (auto& b : blocks_) total += b.size;
  return total;
}

}  // namespace engram::core
