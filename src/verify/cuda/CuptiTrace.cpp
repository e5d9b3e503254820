#include "CuptiTrace.h"

#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace graphlint::verify::cuda {
namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr size_t kAlign = 8;

std::mutex gMutex;
CuptiTrace *gActive = nullptr;

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxNumRecords) {
  *size = kBufferBytes;
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(kAlign, kBufferBytes));
  *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t validSize) {
  {
    std::lock_guard<std::mutex> lock(gMutex);
    if (gActive)
      gActive->consume(buffer, validSize);
  }
  std::free(buffer);
}

llvm::Error cuptiError(const char *what, CUptiResult r) {
  const char *msg = nullptr;
  cuptiGetResultString(r, &msg);
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "CUPTI %s failed: %s", what, msg ? msg : "?");
}

const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

}  // namespace

llvm::Expected<std::unique_ptr<CuptiTrace>> CuptiTrace::start() {
  std::unique_ptr<CuptiTrace> t(new CuptiTrace());
  if (CUptiResult r = cuptiActivityRegisterCallbacks(bufferRequested, bufferCompleted); r != CUPTI_SUCCESS)
    return cuptiError("cuptiActivityRegisterCallbacks", r);
  for (CUpti_ActivityKind k : kKinds)
    if (CUptiResult r = cuptiActivityEnable(k); r != CUPTI_SUCCESS)
      return cuptiError("cuptiActivityEnable", r);
  std::lock_guard<std::mutex> lock(gMutex);
  gActive = t.get();
  return t;
}

CuptiTrace::~CuptiTrace() {
  for (CUpti_ActivityKind k : kKinds)
    cuptiActivityDisable(k);
  cuptiActivityFlushAll(1);
  std::lock_guard<std::mutex> lock(gMutex);
  if (gActive == this)
    gActive = nullptr;
}

void CuptiTrace::pushNode(uint64_t id, const std::string &name) {
  cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
  nvtxRangePushA(name.c_str());
}

void CuptiTrace::popNode() {
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  nvtxRangePop();
}

void CuptiTrace::clear() {
  cuptiActivityFlushAll(1);
  std::lock_guard<std::mutex> lock(gMutex);
  kernels_.clear();
  memcpys_.clear();
  memory_.clear();
  externalOf_.clear();
  kernelCorrelation_.clear();
  memcpyCorrelation_.clear();
}

void CuptiTrace::flush() {
  cuptiActivityFlushAll(1);
  std::lock_guard<std::mutex> lock(gMutex);
  for (size_t i = 0; i < kernels_.size(); ++i)
    if (auto it = externalOf_.find(kernelCorrelation_[i]); it != externalOf_.end())
      kernels_[i].node = it->second;
  for (size_t i = 0; i < memcpys_.size(); ++i)
    if (auto it = externalOf_.find(memcpyCorrelation_[i]); it != externalOf_.end())
      memcpys_[i].node = it->second;
}

void CuptiTrace::consume(uint8_t *buffer, size_t validSize) {
  CUpti_Activity *record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto *k = reinterpret_cast<CUpti_ActivityKernel10 *>(record);
      KernelRecord kr;
      kr.name = k->name ? k->name : "?";
      kr.start = k->start;
      kr.end = k->end;
      kr.grid[0] = k->gridX;
      kr.grid[1] = k->gridY;
      kr.grid[2] = k->gridZ;
      kernels_.push_back(std::move(kr));
      kernelCorrelation_.push_back(k->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto *m = reinterpret_cast<CUpti_ActivityMemcpy6 *>(record);
      memcpys_.push_back({m->bytes, m->start, m->end, m->copyKind, 0});
      memcpyCorrelation_.push_back(m->correlationId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      auto *m = reinterpret_cast<CUpti_ActivityMemory4 *>(record);
      if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION ||
          m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
        memory_.push_back({m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, m->bytes,
                           m->address, m->timestamp});
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      auto *e = reinterpret_cast<CUpti_ActivityExternalCorrelation *>(record);
      externalOf_[e->correlationId] = e->externalId;
      break;
    }
    default:
      break;
    }
  }
}

uint64_t CuptiTrace::peakAllocatedBytes() const {
  std::vector<MemoryRecord> sorted = memory_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const MemoryRecord &a, const MemoryRecord &b) { return a.timestamp < b.timestamp; });
  int64_t live = 0, peak = 0;
  for (const MemoryRecord &m : sorted) {
    live += m.allocation ? static_cast<int64_t>(m.bytes) : -static_cast<int64_t>(m.bytes);
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

}  // namespace graphlint::verify::cuda
