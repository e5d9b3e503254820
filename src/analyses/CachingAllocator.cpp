#include "graphlint/analyses/CachingAllocator.h"

#include <algorithm>

namespace graphlint {

uint64_t AllocatorSim::roundSize(uint64_t bytes) {
  if (bytes < kMinBlockSize)
    return kMinBlockSize;
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

uint64_t AllocatorSim::segmentSize(uint64_t rounded) {
  if (rounded <= kSmallSize)
    return kSmallBuffer;
  if (rounded < kMinLargeAlloc)
    return kLargeBuffer;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

void AllocatorSim::insertFree(int b) {
  const Block &k = blocks_[b];
  poolOf(k).insert({k.size, k.segment, k.offset, b});
  (k.small ? smallFree_ : largeFree_) += k.size;
}

void AllocatorSim::eraseFree(int b) {
  const Block &k = blocks_[b];
  poolOf(k).erase({k.size, k.segment, k.offset, b});
  (k.small ? smallFree_ : largeFree_) -= k.size;
}

void AllocatorSim::allocate(uint64_t id, uint64_t bytes) {
  if (live_.count(id))
    return;
  uint64_t size = roundSize(bytes);
  bool small = size <= kSmallSize;
  FreeSet &pool = small ? small_ : large_;
  auto newBlock = [&](const Block &k) {
    if (!spare_.empty()) {
      int i = spare_.back();
      spare_.pop_back();
      blocks_[i] = k;
      return i;
    }
    blocks_.push_back(k);
    return static_cast<int>(blocks_.size() - 1);
  };
  int b;
  auto it = pool.lower_bound({size, 0, 0, -1});
  if (it != pool.end()) {
    b = std::get<3>(*it);
    eraseFree(b);
  } else {
    // No cached block fits: a new segment (cudaMalloc).
    Block k;
    k.segment = segments_++;
    k.size = segmentSize(size);
    if ((small ? smallFree_ : largeFree_) >= size)
      fragmentedGrowth_ += k.size;
    uint64_t largest = 0;
    for (const FreeSet *p : {&small_, &large_})
      if (!p->empty())
        largest = std::max(largest, std::get<0>(*p->rbegin()));
    k.small = small;
    b = newBlock(k);
    reserved_ += k.size;
    segmentSizes_.push_back(k.size);
    segmentSmall_.push_back(small);
    if (log_)
      log_->push_back({Event::SegmentAlloc, id, k.segment, 0, k.size, bytes});
    if (reserved_ > peakReserved_) {
      peakReserved_ = reserved_;
      freeAtPeak_ = smallFree_ + largeFree_;
      largestFreeAtPeak_ = largest;
    }
  }
  uint64_t rest = blocks_[b].size - size;
  if (small ? rest >= kMinBlockSize : rest > kSmallSize) {
    Block tail = blocks_[b];
    tail.offset += size;
    tail.size = rest;
    tail.prev = b;
    tail.used = false;
    int t = newBlock(tail);
    if (blocks_[t].next >= 0)
      blocks_[blocks_[t].next].prev = t;
    blocks_[b].next = t;
    blocks_[b].size = size;
    insertFree(t);
  }
  blocks_[b].used = true;
  live_[id] = b;
  allocated_ += blocks_[b].size;
  if (log_) {
    log_->push_back({Event::Alloc, id, blocks_[b].segment, blocks_[b].offset, blocks_[b].size, bytes});
    requested_[id] = bytes;
  }
  peakAllocated_ = std::max(peakAllocated_, allocated_);
}

void AllocatorSim::release(uint64_t id) {
  auto it = live_.find(id);
  if (it == live_.end())
    return;
  int b = it->second;
  live_.erase(it);
  if (log_) {
    uint64_t asked = 0;
    if (auto r = requested_.find(id); r != requested_.end()) {
      asked = r->second;
      requested_.erase(r);
    }
    log_->push_back({Event::Free, id, blocks_[b].segment, blocks_[b].offset, blocks_[b].size, asked});
  }
  allocated_ -= blocks_[b].size;
  blocks_[b].used = false;
  // Merge with free neighbours of the same segment.
  auto absorb = [&](int into, int from) {
    eraseFree(from);
    Block &a = blocks_[into];
    const Block &f = blocks_[from];
    a.offset = std::min(a.offset, f.offset);
    a.size += f.size;
    if (f.prev == into) {
      a.next = f.next;
      if (f.next >= 0)
        blocks_[f.next].prev = into;
    } else {
      a.prev = f.prev;
      if (f.prev >= 0)
        blocks_[f.prev].next = into;
    }
    spare_.push_back(from);
  };
  if (int n = blocks_[b].next; n >= 0 && !blocks_[n].used)
    absorb(b, n);
  if (int p = blocks_[b].prev; p >= 0 && !blocks_[p].used)
    absorb(b, p);
  insertFree(b);
}

std::vector<AllocatorSim::SegmentState> AllocatorSim::segmentStates() const {
  std::vector<SegmentState> out(segmentSizes_.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].size = segmentSizes_[i];
    out[i].small = segmentSmall_[i];
  }
  std::vector<bool> spare(blocks_.size(), false);
  for (int i : spare_)
    spare[i] = true;
  std::unordered_map<int, uint64_t> owner;
  for (const auto &[id, b] : live_)
    owner[b] = id;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    if (spare[i])
      continue;
    const Block &k = blocks_[i];
    BlockState s{k.offset, k.size, k.used, 0, 0};
    if (k.used) {
      s.id = owner.at(static_cast<int>(i));
      auto r = requested_.find(s.id);
      s.requested = r != requested_.end() ? r->second : k.size;
    }
    out[k.segment].blocks.push_back(s);
  }
  for (SegmentState &seg : out)
    std::sort(seg.blocks.begin(), seg.blocks.end(),
              [](const BlockState &a, const BlockState &b) { return a.offset < b.offset; });
  return out;
}

}  // namespace graphlint
