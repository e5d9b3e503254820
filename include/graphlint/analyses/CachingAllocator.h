// A replay of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp,
// default settings, one stream): requests rounded up to 512 B; blocks of at
// most 1 MiB come from a small pool of 2 MiB segments, larger ones from a
// large pool of 20 MiB segments (requests under 10 MiB) or of their own size
// rounded up to 2 MiB; the best-fitting free block of the pool is reused and
// split when the rest is worth keeping (>= 512 B small, > 1 MiB large); freed
// blocks merge with free neighbours of the same segment; segments are never
// returned (no empty_cache). Replaying the memory plan's alloc/free trace
// gives the peak reserved bytes and the fragmentation at the reserved peak
// (docs/memory.md#caching-allocator).
#pragma once

#include <cstdint>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace graphlint {

class AllocatorSim {
public:
  static constexpr uint64_t kMinBlockSize = 512;
  static constexpr uint64_t kSmallSize = 1 << 20;        // largest small-pool block
  static constexpr uint64_t kSmallBuffer = 2 << 20;      // small-pool segment
  static constexpr uint64_t kLargeBuffer = 20 << 20;     // large-pool segment
  static constexpr uint64_t kMinLargeAlloc = 10 << 20;   // below: a 20 MiB segment
  static constexpr uint64_t kRoundLarge = 2 << 20;       // larger: rounded to 2 MiB

  /// The block size a request of `bytes` gets (512 B multiples, at least 512).
  static uint64_t roundSize(uint64_t bytes);
  /// The segment cudaMalloc'd when no cached block fits a rounded request.
  static uint64_t segmentSize(uint64_t rounded);

  /// Allocates the storage `id` (ids are the caller's, unique while live).
  void allocate(uint64_t id, uint64_t bytes);
  /// Frees `id`; unknown ids are ignored.
  void release(uint64_t id);

  uint64_t allocated() const { return allocated_; }
  uint64_t reserved() const { return reserved_; }
  uint64_t peakAllocated() const { return peakAllocated_; }
  uint64_t peakReserved() const { return peakReserved_; }
  uint64_t segments() const { return segments_; }
  /// The cached free bytes, and the largest free block, just before the
  /// allocator grew to its peak reserved (the last new segment): what it held
  /// but could not use for that request. Fragmentation is 1 - largest / free.
  uint64_t freeAtPeak() const { return freeAtPeak_; }
  uint64_t largestFreeAtPeak() const { return largestFreeAtPeak_; }
  /// Bytes of segments reserved while the request's pool held enough free
  /// bytes for it, only split into blocks too small: growth that
  /// fragmentation alone caused.
  uint64_t fragmentedGrowth() const { return fragmentedGrowth_; }

  /// What the replay did, in order, for a caller that draws it (the
  /// predicted memory snapshot, MemorySnapshot.h): a new segment (cudaMalloc),
  /// a block handed out for a request, a block returned.
  struct Event {
    enum Kind : uint8_t { SegmentAlloc, Alloc, Free } kind;
    uint64_t id = 0;                 // the caller's storage id (Alloc, Free)
    uint64_t segment = 0, offset = 0;
    uint64_t size = 0;               // the block's (or segment's) size
    uint64_t requested = 0;          // Alloc, Free: the bytes asked for
  };
  /// Appends every later event to `log` (nullptr stops recording).
  void recordEvents(std::vector<Event> *log) { log_ = log; }

  /// The segments as they stand now, each with its blocks in address order.
  struct BlockState {
    uint64_t offset = 0, size = 0;
    bool used = false;
    uint64_t id = 0;                 // the storage holding a used block
    uint64_t requested = 0;          // its bytes asked for
  };
  struct SegmentState {
    uint64_t size = 0;
    bool small = false;
    std::vector<BlockState> blocks;
  };
  std::vector<SegmentState> segmentStates() const;

private:
  struct Block {
    uint64_t segment = 0, offset = 0, size = 0;
    int prev = -1, next = -1;   // neighbours in the segment
    bool small = false, used = false;
  };
  // Free blocks per pool ordered like PyTorch's BlockComparator: size, then address.
  using FreeSet = std::set<std::tuple<uint64_t, uint64_t, uint64_t, int>>;
  FreeSet &poolOf(const Block &b) { return b.small ? small_ : large_; }
  void insertFree(int b);
  void eraseFree(int b);

  std::vector<Block> blocks_;
  std::vector<int> spare_;      // recycled entries of blocks_
  FreeSet small_, large_;
  std::unordered_map<uint64_t, int> live_;
  std::unordered_map<uint64_t, uint64_t> requested_;  // per live id, only while recording
  std::vector<uint64_t> segmentSizes_;
  std::vector<bool> segmentSmall_;
  std::vector<Event> *log_ = nullptr;
  uint64_t allocated_ = 0, reserved_ = 0, peakAllocated_ = 0, peakReserved_ = 0, segments_ = 0;
  uint64_t smallFree_ = 0, largeFree_ = 0;  // bytes in each pool's free blocks
  uint64_t freeAtPeak_ = 0, largestFreeAtPeak_ = 0, fragmentedGrowth_ = 0;
};

}  // namespace graphlint
