// The reduction ladder's warp-level algorithms (reduce/warp.hpp), run on the host at 32 and 64 lanes: no GPU
// needed. A model of one block runs every thread of it on a std::thread of its own; __syncthreads and the warp
// synchronisation are barriers (of the block, of the thread's warp), and a shuffle is an exchange through a
// buffer between two barriers of the warp. A warp-wide step that not every lane of a warp reaches (a shuffle or a
// warp barrier under a condition that splits a warp) times out and fails the test, as it would hang or be
// undefined on a GPU; shared memory is a bounds-checked view, so a read past the block's array fails too.
// The same code runs in the kernels with kWarpSize lanes (32, or 64 in the HIP build); tests/lane_mutations.py
// checks that these tests fail when a literal 32 is put back into the algorithms.
#include "reduce/warp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using ks::reduce::block_fold;
using ks::reduce::kMaxWarps;
using ks::reduce::kMinTreeBlock;
using ks::reduce::PlainFold;

// A reusable barrier for `count` threads that gives up where a step is not reached by every thread: once every
// thread of the block has been started, kStall without an arrival at this barrier. Then it fails every later wait
// of the block at once. A timeout counted from the first wait instead failed the unmutated header on a loaded host
// (ctest -j16 on the GPU host), where starting a block's 1024 threads can take longer than kStall.
using Clock = std::chrono::steady_clock;
constexpr auto kStall = std::chrono::seconds(2);

class Barrier {
 public:
  // started: when the last thread of the block was started (Clock's epoch until then).
  Barrier(unsigned count, std::atomic<bool>& aborted, const std::atomic<Clock::time_point>& started)
      : count_(count), aborted_(aborted), started_(started) {}
  void arrive_and_wait() {
    std::unique_lock lock(mutex_);
    if (aborted_) throw std::runtime_error("the block was aborted");
    const unsigned generation = generation_;
    last_arrival_ = Clock::now();
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      done_.notify_all();
      return;
    }
    auto passed = [&] { return generation_ != generation || aborted_.load(); };
    while (!passed()) {
      const Clock::time_point started = started_.load();
      const bool all_started = started != Clock::time_point{};
      // Until every thread has started, the deadline moves on with the clock.
      const Clock::time_point deadline = (all_started ? std::max(last_arrival_, started) : Clock::now()) + kStall;
      if (done_.wait_until(lock, deadline, passed)) break;
      if (all_started && Clock::now() >= std::max(last_arrival_, started) + kStall) {
        aborted_ = true;
        done_.notify_all();
        throw std::runtime_error("a warp-wide step that not every thread reached");
      }
    }
    if (generation_ == generation) throw std::runtime_error("the block was aborted");
  }
  void wake() {
    std::lock_guard lock(mutex_);
    done_.notify_all();
  }

 private:
  const unsigned count_;
  std::atomic<bool>& aborted_;
  const std::atomic<Clock::time_point>& started_;
  std::mutex mutex_;
  std::condition_variable done_;
  unsigned arrived_ = 0, generation_ = 0;
  Clock::time_point last_arrival_;
};

// One block of `threads` threads (a multiple of W) in warps of W lanes.
template <int W>
class BlockModel {
 public:
  explicit BlockModel(unsigned threads) : threads_(threads), block_(threads, aborted_, started_), slots_(threads) {
    if (threads % W != 0) throw std::invalid_argument("the model runs whole warps");
    for (unsigned w = 0; w < threads / W; ++w) warps_.push_back(std::make_unique<Barrier>(W, aborted_, started_));
  }

  // What reduce/warp.hpp asks of a thread.
  class Thread {
   public:
    Thread(BlockModel& m, unsigned id) : m_(m), id_(id) {}
    unsigned tid() const { return id_; }
    unsigned block_size() const { return m_.threads_; }
    void sync_block() const { m_.block_.arrive_and_wait(); }
    void sync_warp() const { m_.warps_[id_ / W]->arrive_and_wait(); }
    template <class T>
    T shfl_down(T v, unsigned offset) const {
      static_assert(sizeof(T) <= sizeof(Slot), "a shuffled value fits a slot");
      ++m_.shuffles_[id_];
      std::memcpy(m_.slots_[id_].bytes, &v, sizeof(T));
      sync_warp();
      const unsigned lane = id_ % W;
      const unsigned from = lane + offset < W ? id_ + offset : id_;
      T r;
      std::memcpy(&r, m_.slots_[from].bytes, sizeof(T));
      sync_warp();
      return r;
    }

   private:
    BlockModel& m_;
    unsigned id_;
  };

  // Runs body(Thread) on every thread of the block; the first error any thread met, or "".
  template <class Body>
  std::string run(Body body) {
    started_ = Clock::time_point{};
    shuffles_.assign(threads_, 0);
    std::vector<std::string> errors(threads_);
    std::vector<std::thread> pool;
    pool.reserve(threads_);
    for (unsigned i = 0; i < threads_; ++i) {
      pool.emplace_back([&, i] {
        try {
          body(Thread(*this, i));
        } catch (const std::exception& e) {
          errors[i] = e.what();
          aborted_ = true;
          block_.wake();
          for (auto& w : warps_) w->wake();
        }
      });
    }
    started_ = Clock::now();
    for (auto& t : pool) t.join();
    for (const auto& e : errors)
      if (!e.empty() && e != "the block was aborted") return e;
    for (const auto& e : errors)
      if (!e.empty()) return e;
    return "";
  }

  // Shuffles each thread made in the last run.
  const std::vector<int>& shuffles() const { return shuffles_; }

 private:
  struct Slot {
    alignas(16) unsigned char bytes[16];
  };
  const unsigned threads_;
  std::atomic<bool> aborted_{false};
  std::atomic<Clock::time_point> started_{Clock::time_point{}};
  Barrier block_;
  std::vector<std::unique_ptr<Barrier>> warps_;
  std::vector<Slot> slots_;
  std::vector<int> shuffles_;
};

// Shared memory: a bounds-checked view of a host array.
template <class T>
struct Shared {
  std::vector<T>* data;
  T& operator[](std::size_t i) const {
    if (i >= data->size())
      throw std::out_of_range("shared memory read or written at " + std::to_string(i) + " of " +
                              std::to_string(data->size()));
    return (*data)[i];
  }
};

// Distinct values whose sum is exact in int64 and detects a missing or doubled term: thread i holds 2^(i % 40)
// plus i.
std::int64_t value_of(unsigned i) { return (std::int64_t(1) << (i % 40)) + i; }
std::int64_t sum_of(unsigned n) {
  std::int64_t s = 0;
  for (unsigned i = 0; i < n; ++i) s += value_of(i);
  return s;
}

template <class T>
class WarpModel : public ::testing::Test {};
template <int N>
struct Lanes {
  static constexpr int W = N;
};
using LaneCounts = ::testing::Types<Lanes<32>, Lanes<64>>;
class LaneName {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::to_string(T::W) + "lanes";
  }
};
TYPED_TEST_SUITE(WarpModel, LaneCounts, LaneName);

TYPED_TEST(WarpModel, WarpFoldSumsEveryLaneInLaneZero) {
  constexpr int W = TypeParam::W;
  BlockModel<W> block(W);
  std::int64_t lane0 = 0;
  const std::string error = block.run([&](const auto& t) {
    const auto v = ks::reduce::warp_fold<W>(PlainFold<std::int64_t>{value_of(t.tid())}, t);
    if (t.tid() == 0) lane0 = v.v;
  });
  ASSERT_EQ(error, "");
  EXPECT_EQ(lane0, sum_of(W));
  // log2(W) shuffles a lane: 5 at 32 lanes, 6 at 64.
  int steps = 0;
  for (int w = W; w > 1; w /= 2) ++steps;
  for (int s : block.shuffles()) EXPECT_EQ(s, steps);
}

TYPED_TEST(WarpModel, BlockFoldSumsTheBlockInThreadZero) {
  constexpr int W = TypeParam::W;
  for (unsigned threads : {unsigned(W), 2u * W, 3u * W, 4u * W, 1024u}) {
    BlockModel<W> block(threads);
    std::vector<PlainFold<std::int64_t>> warp_sums(kMaxWarps<W>, PlainFold<std::int64_t>{-1});
    std::int64_t result = 0;
    const std::string error = block.run([&](const auto& t) {
      const auto v = block_fold<W>(PlainFold<std::int64_t>{value_of(t.tid())},
                                   Shared<PlainFold<std::int64_t>>{&warp_sums}, t);
      if (t.tid() == 0) result = v.v;
    });
    ASSERT_EQ(error, "") << threads << " threads";
    EXPECT_EQ(result, sum_of(threads)) << threads << " threads";
    // One partial a warp: exactly the first threads / W slots written.
    for (unsigned w = 0; w < warp_sums.size(); ++w)
      EXPECT_EQ(warp_sums[w].v != -1, w < threads / W) << threads << " threads, slot " << w;
  }
}

TYPED_TEST(WarpModel, BlockFoldInDoubleMatchesTheTreeOrder) {
  // Doubles whose sum depends on the order: the block's result is the fixed tree's, the same every run.
  constexpr int W = TypeParam::W;
  const unsigned threads = 256;
  std::vector<double> x(threads);
  for (unsigned i = 0; i < threads; ++i) x[i] = (i % 3 == 0 ? 1e16 : 1.0) * (i % 2 ? -1 : 1) + i * 0.1;
  auto run_once = [&] {
    BlockModel<W> block(threads);
    std::vector<PlainFold<double>> warp_sums(kMaxWarps<W>);
    double result = 0;
    const std::string error = block.run([&](const auto& t) {
      const auto v = block_fold<W>(PlainFold<double>{x[t.tid()]}, Shared<PlainFold<double>>{&warp_sums}, t);
      if (t.tid() == 0) result = v.v;
    });
    EXPECT_EQ(error, "");
    return result;
  };
  // The tree's order by hand: within a warp, offsets W/2 .. 1 (lane l adds lane l + offset); then the warps'.
  auto fold_warp = [](std::vector<double> v) {
    for (std::size_t offset = v.size() / 2; offset > 0; offset /= 2)
      for (std::size_t l = 0; l + offset < v.size(); ++l) v[l] += v[l + offset];
    return v[0];
  };
  std::vector<double> partials(W, 0.0);
  for (unsigned w = 0; w < threads / W; ++w)
    partials[w] = fold_warp(std::vector<double>(x.begin() + w * W, x.begin() + (w + 1) * W));
  const double expected = fold_warp(partials);
  EXPECT_EQ(run_once(), expected);
  EXPECT_EQ(run_once(), expected);
}

// The unrolled tree of step 6 for a BS-thread block: every level at compile time, then the warp's tail.
template <int BS, int W>
void check_complete_tree() {
  if constexpr (BS >= kMinTreeBlock<W>) {
    BlockModel<W> block(BS);
    std::vector<std::int64_t> s(BS);
    for (unsigned i = 0; i < BS; ++i) s[i] = value_of(i);
    const std::string error = block.run(
        [&](const auto& t) { ks::reduce::tree_complete<BS, W>(Shared<std::int64_t>{&s}, t.tid(), t); });
    ASSERT_EQ(error, "") << BS << " threads";
    EXPECT_EQ(s[0], sum_of(BS)) << BS << " threads";
  }
}

TYPED_TEST(WarpModel, CompleteTreeSumsEveryBlockSizeItTakes) {
  constexpr int W = TypeParam::W;
  check_complete_tree<64, W>();
  check_complete_tree<128, W>();
  check_complete_tree<256, W>();
  check_complete_tree<512, W>();
  check_complete_tree<1024, W>();
}

TYPED_TEST(WarpModel, InterleavedTreeWithWarpTailSumsEveryBlockSizeItTakes) {
  // Step 5: the interleaved tree down to 2W values, then the first warp's tail.
  constexpr int W = TypeParam::W;
  for (const unsigned bd : ks::reduce::kTreeBlocks<W>) {
    BlockModel<W> block(bd);
    std::vector<std::int64_t> s(bd);
    for (unsigned i = 0; i < bd; ++i) s[i] = value_of(i);
    const std::string error = block.run([&](const auto& t) {
      ks::reduce::tree_interleaved(Shared<std::int64_t>{&s}, t.tid(), bd, W, t);
      ks::reduce::warp_tail<W>(Shared<std::int64_t>{&s}, t.tid(), t);
    });
    ASSERT_EQ(error, "") << bd << " threads";
    EXPECT_EQ(s[0], sum_of(bd)) << bd << " threads";
  }
}

TYPED_TEST(WarpModel, WarpTailNeedsTwoWarpsOfValues) {
  // Why the trees' smallest block is 2W: with one warp's values the tail reads past the block's array.
  constexpr int W = TypeParam::W;
  BlockModel<W> block(W);
  std::vector<std::int64_t> s(W, 1);
  const std::string error =
      block.run([&](const auto& t) { ks::reduce::warp_tail<W>(Shared<std::int64_t>{&s}, t.tid(), t); });
  EXPECT_NE(error.find("shared memory read or written at"), std::string::npos) << error;
}

TEST(WarpModel, ThirtyTwoLaneCodeOnSixtyFourLanesIsCaught) {
  // The model tells the widths apart: the 32-lane fold run on a 64-lane warp leaves half the warp out.
  BlockModel<64> block(64);
  std::int64_t lane0 = 0;
  const std::string error = block.run([&](const auto& t) {
    const auto v = ks::reduce::warp_fold<32>(PlainFold<std::int64_t>{value_of(t.tid())}, t);
    if (t.tid() == 0) lane0 = v.v;
  });
  ASSERT_EQ(error, "");
  EXPECT_EQ(lane0, sum_of(32));
  EXPECT_NE(lane0, sum_of(64));
}

TEST(WarpModel, ADivergentShuffleFailsInsteadOfHanging) {
  // A shuffle that only half a warp reaches is an error on both GPUs; the model reports it.
  BlockModel<32> block(32);
  const std::string error = block.run([&](const auto& t) {
    if (t.tid() < 16) (void)t.shfl_down(1, 1);
  });
  EXPECT_NE(error.find("not every thread reached"), std::string::npos) << error;
}

}  // namespace
