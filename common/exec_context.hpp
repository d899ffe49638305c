// What a variant's launch function gets besides its arguments: the stream to enqueue on, and lazily created
// shared resources (a cuBLAS handle bound to the stream, scratch memory, extra streams) so that variants
// never allocate or create handles on their own inside a timed region after the warm-up.
#pragma once

#include "common/resources.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ks {

// Scratch memory for the launches on one stream, handed out as an arena: each request of a launch gets its
// own region, and a later request never moves an earlier one. begin_launch() hands the whole arena out again
// for the next launch: everything the previous launch enqueued on this stream is ordered before what the next
// one enqueues, so its regions can be reused. When a launch needed more than the arena held, the arena grew
// by a second block; the next begin_launch() waits for the stream once and replaces the blocks by one that
// holds them all, so that after a warm-up launch a steady state allocates nothing.
template <class Storage>
class ScratchArena {
 public:
  static constexpr std::size_t kAlign = 256;

  // A region of at least `bytes`, aligned to kAlign; valid until the next begin_launch().
  void* take(std::size_t bytes) {
    bytes = (bytes + kAlign - 1) / kAlign * kAlign;
    if (blocks_.empty() || room(blocks_.back()) < bytes) {
      std::size_t total = 0;
      for (const Block& b : blocks_) total += b.storage.bytes();
      blocks_.push_back({Storage(units(std::max(bytes, total) + kAlign)), 0});
    }
    Block& b = blocks_.back();
    unsigned char* p = start(b) + b.used;
    b.used += bytes;
    return p;
  }

  // `wait_for_stream()` waits until the work that used the old blocks is done; called only when they merge.
  template <class Wait>
  void begin_launch(Wait&& wait_for_stream) {
    if (blocks_.size() > 1) {
      std::size_t total = 0;
      for (const Block& b : blocks_) total += b.storage.bytes();
      wait_for_stream();  // the old blocks may still be in use
      blocks_.clear();
      blocks_.push_back({Storage(units(total)), 0});
    }
    for (Block& b : blocks_) b.used = 0;
  }

  // The bytes take() can still hand out without allocating (the last block's unused part).
  std::size_t room() const { return blocks_.empty() ? 0 : room(blocks_.back()); }

  std::size_t capacity() const {
    std::size_t total = 0;
    for (const Block& b : blocks_) total += b.storage.bytes();
    return total;
  }

 private:
  using Unit = std::remove_pointer_t<decltype(std::declval<Storage>().data())>;
  static std::size_t units(std::size_t bytes) { return (bytes + sizeof(Unit) - 1) / sizeof(Unit); }
  struct Block {
    Storage storage;
    std::size_t used;  // bytes handed out from start()
  };
  // The block's first kAlign-aligned byte, and the bytes from there not yet handed out.
  static unsigned char* start(const Block& b) {
    const auto base = reinterpret_cast<std::uintptr_t>(b.storage.data());
    return reinterpret_cast<unsigned char*>((base + kAlign - 1) / kAlign * kAlign);
  }
  static std::size_t room(const Block& b) {
    const std::size_t skipped = static_cast<std::size_t>(start(b) - reinterpret_cast<unsigned char*>(b.storage.data()));
    return b.storage.bytes() - skipped - b.used;
  }
  std::vector<Block> blocks_;
};

class ExecContext {
 public:
  explicit ExecContext(cudaStream_t stream) : stream_(stream) {}
  ExecContext(const ExecContext&) = delete;
  ExecContext& operator=(const ExecContext&) = delete;

  cudaStream_t stream() const noexcept { return stream_; }

#if !defined(KS_HIP)  // cuBLAS: the CUDA build only
  // A cuBLAS handle bound to stream(), created on first use, with a 32 MiB workspace of its own.
  cublasHandle_t cublas();
  // The handle with a workspace of at least `bytes` (from device scratch, this launch only) where a call
  // needs more (cuBLAS's emulated FP64); restore_cublas_workspace() puts the 32 MiB one back.
  cublasHandle_t cublas_with_workspace(std::size_t bytes);
  void restore_cublas_workspace();
  // cuBLAS's 32 MiB workspace, for cuBLASLt calls on stream() (which take theirs per call).
  std::pair<void*, std::size_t> cublas_workspace();
  // A cuBLASLt handle, created on first use (its calls name their stream).
  cublasLtHandle_t cublaslt();
#endif

  // Called by the families' run functions before every variant launch: the scratch arenas start over.
  void begin_launch();
  // Device scratch of at least `bytes`, 256-byte aligned, valid until the next launch begins; a second
  // request of the same launch gets a region of its own.
  void* device_scratch(std::size_t bytes) { return device_scratch_.take(bytes); }
  std::size_t device_scratch_capacity() const { return device_scratch_.capacity(); }
  // What this launch can still take from device scratch without an allocation.
  std::size_t device_scratch_room() const { return device_scratch_.room(); }
  // Pinned host scratch, likewise.
  void* pinned_scratch(std::size_t bytes) { return pinned_scratch_.take(bytes); }
  // `count` 32-bit device counters, zeroed once when first allocated. Kernels that use them must leave them
  // zero when they finish (self-resetting), so no memset is needed per launch.
  unsigned* zeroed_counters(std::size_t count);
  // How many there are now (0 before the first request): for tests that hold kernels to leaving them zero.
  std::size_t zeroed_counter_count() const { return counters_.size(); }
  // `count` non-blocking streams besides stream(), created on first use.
  const std::vector<Stream>& extra_streams(std::size_t count);
  // A non-blocking stream of the device's greatest priority, created on first use: for work beside a long
  // kernel on stream() that should take SMs as soon as they free up.
  cudaStream_t priority_stream();
  // Events for ordering extra streams against stream(), created on first use.
  const std::vector<Event>& sync_events(std::size_t count);
  // What the last launch chose, for the harness to report with its row (e.g. ozaki's moduli count and why):
  // begin_launch() clears them.
  std::map<std::string, std::string>& notes() { return notes_; }

  // Phase times of one launch, for the harness to report (off by default, so timed launches record nothing
  // extra). A variant marks the end of each phase of its launch by name; with timing on, begin_launch() records
  // an event on stream() and so does each mark. phase_ms(): after the launch, each phase's time since the
  // previous mark, in the order marked (it waits for the last event).
  void time_phases(bool on) { time_phases_ = on; }
  void mark_phase(const char* name);
  std::vector<std::pair<std::string, double>> phase_ms();

 private:
  cudaStream_t stream_;
#if !defined(KS_HIP)
  std::unique_ptr<CublasHandle> cublas_;
  std::unique_ptr<CublasLtHandle> cublaslt_;
  DeviceBuffer<unsigned char> cublas_workspace_;
#endif
  ScratchArena<DeviceBuffer<std::max_align_t>> device_scratch_;
  ScratchArena<PinnedBuffer<std::max_align_t>> pinned_scratch_;
  DeviceBuffer<unsigned> counters_;
  std::vector<Stream> streams_;
  std::unique_ptr<Stream> priority_stream_;
  std::vector<Event> events_;
  std::map<std::string, std::string> notes_;
  bool time_phases_ = false;
  std::vector<Event> phase_events_;      // [0]: the launch's start, [i]: the end of phase_names_[i - 1]
  std::vector<std::string> phase_names_;
  std::size_t phase_marks_ = 0;          // events recorded in this launch
};

}  // namespace ks
