// Arena: a bump allocator for activations and their gradients, reset once per batch.
// Memory is kept across resets (never returned to the OS), so a steady-state training step
// allocates nothing from malloc: glibc would otherwise unmap and page-fault big blocks every step.
// The blocks of a destroyed arena are cached (up to kBlockCacheBytes in the process) for the next
// one, so a Graph made per decoded batch or per request does not page-fault its memory afresh
// either. AddressSanitizer builds skip the cache (ASan then sees every block's own lifetime).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace engram::core {

// The most bytes of freed arena blocks the process keeps for reuse.
inline constexpr size_t kBlockCacheBytes = size_t{256} << 20;

// 3/4 of the machine's physical memory (read once): the most one graph's activations (an arena's
// default limit) or one model's parameters (nn::ParamStore) may take. Past it is an
// engram::Error naming the sizes — a batch or a model too large for the machine — where the
// kernel's OOM killer would end the process.
size_t memory_limit();

class Arena {
 public:
  explicit Arena(size_t initial_bytes = size_t{1} << 20, size_t limit_bytes = memory_limit());
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // `bytes` of uninitialised memory aligned to 64 bytes, valid until reset(). Errors when the
  // allocations since the last reset would exceed the arena's limit.
  void* allocate(size_t bytes);
  float* floats(size_t n) { return static_cast<float*>(allocate(n * sizeof(float))); }
  template <class T>
  T* array(size_t n) { return static_cast<T*>(allocate(n * sizeof(T))); }

  // Forget every allocation. If the last cycle spilled into extra blocks, they are merged into
  // one block big enough for the whole cycle, so the next cycle stays in a single block.
  void reset();
  size_t used() const { return used_total_; }
  size_t capacity() const;

 private:
  // An aligned block; on destruction it goes to a process-wide cache of free blocks (arena.cc)
  // for the next arena, or back to malloc when the cache is full.
  struct Block {
    std::byte* mem = nullptr;
    size_t size = 0;
    Block() = default;
    Block(std::byte* m, size_t s) : mem(m), size(s) {}
    Block(Block&& o) noexcept : mem(o.mem), size(o.size) { o.mem = nullptr; }
    Block& operator=(Block&& o) noexcept;
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    ~Block();
  };
  static Block make_block(size_t bytes);

  std::vector<Block> blocks_;
  size_t current_ = 0;  // index of the block being filled
  size_t offset_ = 0;   // bytes used in the current block
  size_t used_total_ = 0;
  size_t limit_;
};

}  // namespace engram::core
