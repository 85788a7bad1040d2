// Arena implementation: 64-byte aligned blocks, merged on reset.
#include "engram/core/arena.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

#include <fmt/format.h>

#include "engram/core/error.h"

namespace engram::core {

namespace {
constexpr size_t kAlign = 64;
size_t round_up(size_t n) { return (n + kAlign - 1) & ~(kAlign - 1); }

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCacheBlocks = false;  // ASan sees each block's own lifetime (a use after free stays caught)
#else
constexpr bool kCacheBlocks = true;
#endif

// Free blocks of destroyed arenas by size, at most kBlockCacheBytes in all; any thread (the one
// mutable global of the engine, DESIGN.md: it decides where memory comes from, never a value).
class BlockCache {
 public:
  // The smallest cached block of `bytes` to twice that (its size in `size`), or nullptr.
  std::byte* take(size_t bytes, size_t& size) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.lower_bound(bytes);
    if (it == blocks_.end() || it->first / 2 > bytes) return nullptr;
    std::byte* p = it->second;
    size = it->first;
    bytes_ -= it->first;
    blocks_.erase(it);
    return p;
  }
  // Keeps the block if there is room (then true).
  bool put(std::byte* p, size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes_ + size > kBlockCacheBytes) return false;
    blocks_.emplace(size, p);
    bytes_ += size;
    return true;
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, std::byte*> blocks_;
  size_t bytes_ = 0;
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache;  // never destroyed: arenas may outlive static destructors
  return *c;
}
}  // namespace

Arena::Block& Arena::Block::operator=(Block&& o) noexcept {
  if (this != &o) {
    Block dead(mem, size);  // released at the end of this scope
    mem = o.mem;
    size = o.size;
    o.mem = nullptr;
  }
  return *this;
}

Arena::Block::~Block() {
  if (!mem) return;
  if (!kCacheBlocks || !cache().put(mem, size)) std::free(mem);
}

Arena::Block Arena::make_block(size_t bytes) {
  bytes = round_up(bytes);
  size_t size = 0;
  if (std::byte* p = kCacheBlocks ? cache().take(bytes, size) : nullptr) return Block(p, size);
  auto* p = static_cast<std::byte*>(std::aligned_alloc(kAlign, bytes));
  if (!p) throw std::bad_alloc();
  return Block(p, bytes);
}

size_t memory_limit() {
  static const size_t limit = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return SIZE_MAX;  // unknown: no limit of our own
    return static_cast<size_t>(pages) / 4 * 3 * static_cast<size_t>(page);
  }();
  return limit;
}

Arena::Arena(size_t initial_bytes, size_t limit_bytes) : limit_(limit_bytes) {
  blocks_.push_back(make_block(initial_bytes));
}

void* Arena::allocate(size_t bytes) {
  bytes = round_up(bytes == 0 ? 1 : bytes);
  if (bytes > limit_ || used_total_ > limit_ - bytes) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    throw Error(fmt::format("one graph needs more than {:.2f} GiB of activations, over its limit of {:.2f} GiB (3/4 "
                            "of this machine's memory): the batch is too large for this machine (a smaller "
                            "data.max_tokens or data.batch_size, or decode batch)",
                            (static_cast<double>(used_total_) + static_cast<double>(bytes)) / kGiB,
                            static_cast<double>(limit_) / kGiB));
  }
  used_total_ += bytes;
  while (true) {
    Block& b = blocks_[current_];
    if (offset_ + bytes <= b.size) {
      void* p = b.mem + offset_;
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
