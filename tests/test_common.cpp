#include "common/device_info.hpp"
#include "common/exec_context.hpp"
#include "common/json.hpp"
#include "common/process.hpp"
#include "common/random.hpp"
#include "common/registry.hpp"
#include "common/timing.hpp"
#include "gpu_test.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

namespace ks {
namespace {

TEST(TimingStatsTest, MedianMinMaxSpreadAndNoise) {
  const TimingStats odd = TimingStats::from_samples({5, 1, 3}, 0.01);
  EXPECT_DOUBLE_EQ(odd.median_ms, 3);
  EXPECT_DOUBLE_EQ(odd.min_ms, 1);
  EXPECT_DOUBLE_EQ(odd.max_ms, 5);
  EXPECT_DOUBLE_EQ(odd.stddev_ms, 2);  // sample standard deviation of 1, 3, 5
  EXPECT_DOUBLE_EQ(odd.noise, 2.0 / 3.0);
  EXPECT_FALSE(odd.noise_met);
  EXPECT_DOUBLE_EQ(TimingStats::from_samples({4, 1, 3, 2}).median_ms, 2.5);
  const TimingStats flat = TimingStats::from_samples({2, 2, 2}, 0.01);
  EXPECT_DOUBLE_EQ(flat.noise, 0);
  EXPECT_TRUE(flat.noise_met);
  EXPECT_EQ(flat.repetitions(), 3);
  EXPECT_THROW(TimingStats::from_samples({}), std::invalid_argument);
}

TEST(FastestOnceTest, WarmsUpOnceThenTimesEachCandidateOnce) {
  std::vector<int> calls;
  std::vector<double> ms;
  const int best = fastest_once(3, [&](int i) {
    calls.push_back(i);
    if (calls.size() > 1 && i != 1) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }, &ms);
  EXPECT_EQ(calls, (std::vector<int>{0, 0, 1, 2}));  // the warm-up is the first candidate
  EXPECT_EQ(best, 1);
  ASSERT_EQ(ms.size(), 3u);
  EXPECT_GE(ms[0], 19.0);
  EXPECT_LT(ms[1], ms[0]);
  EXPECT_EQ(fastest_once(1, [](int) {}), 0);
  EXPECT_THROW(fastest_once(0, [](int) {}), std::invalid_argument);
}

TEST(SeedTest, ParsesDecimalSeedsAndRefusesTheRest) {
  EXPECT_EQ(parse_seed("0"), 0u);
  EXPECT_EQ(parse_seed("12345"), 12345u);
  EXPECT_EQ(parse_seed("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "abc", "-1", "+1", "1.5", "0x10", " 7", "7 ", "18446744073709551616", "99999999999999999999999"}) {
    try {
      parse_seed(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("KS_SEED"), std::string::npos) << e.what();
    }
  }
}

TEST(RandomTest, SeededFillsRepeatAndDiffer) {
  std::vector<double> a(64), b(64), c(64);
  fill_random(a.data(), a.size(), 7);
  fill_random(b.data(), b.size(), 7);
  fill_random(c.data(), c.size(), 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (double x : a) EXPECT_TRUE(x >= -1 && x < 1);
  std::vector<std::int32_t> ints(1000);
  fill_random(ints.data(), ints.size(), 3);
  bool negative = false, positive = false;
  for (auto v : ints) (v < 0 ? negative : positive) = true;
  EXPECT_TRUE(negative && positive);
}

TEST(RandomTest, PoisonValues) {
  EXPECT_TRUE(std::isnan(poison_value<double>()));
  EXPECT_TRUE(std::isnan(poison_value<float>()));
  EXPECT_EQ(poison_value<std::int32_t>(), static_cast<std::int32_t>(0x5A5A5A5A));
  EXPECT_EQ(poison_value<std::int64_t>(), static_cast<std::int64_t>(0x5A5A5A5A5A5A5A5Aull));
}

TEST(JsonTest, EscapesAndNests) {
  std::ostringstream os;
  json::Writer w(os, 0);
  w.begin_object().value("a\"b", "x\ny").value("n", 3).value("inf", INFINITY).begin_array("l").end_array()
      .end_object();
  EXPECT_EQ(os.str(), "{\n\"a\\\"b\": \"x\\ny\",\n\"n\": 3,\n\"inf\": null,\n\"l\": []\n}\n");
}

struct FakeVariant {
  VariantInfo info{};
};

TEST(LadderPlaceTest, StepFromTheNumberedFileOrFolder) {
  const LadderPlace file = ladder_place("/home/u/01_work/suite/gemm/03_coalesced.cu", "gemm");
  EXPECT_EQ(file.step, 3);
  EXPECT_EQ(file.entry, "gemm/03_coalesced.cu");
  EXPECT_EQ(file.file, "gemm/03_coalesced.cu");
  const LadderPlace folder = ladder_place("/src/gemm/07_ozaki/kernels.cu", "gemm");
  EXPECT_EQ(folder.step, 7);
  EXPECT_EQ(folder.entry, "gemm/07_ozaki");
  EXPECT_EQ(folder.file, "gemm/07_ozaki/kernels.cu");
  EXPECT_EQ(ladder_place("/src/gemm/modes.cpp", "gemm").step, -1);
  EXPECT_EQ(ladder_place("/src/reduce/01_neighbored.cu", "gemm").step, -1);  // another family's folder
  EXPECT_EQ(ladder_place("/src/gemm/1_naive.cu", "gemm").step, -1);          // two digits and '_'
}

TEST(RegistryTest, LadderOrderFromFilesDuplicatesAndEmptyEntries) {
  Registry<FakeVariant> r("fam");  // a registry of its own: the test can repeat
  r.add({.info = {.name = "late"}}, "/src/fam/10_late.cu");
  r.add({.info = {.name = "b"}}, "/src/fam/02_two.cu");
  r.add({.info = {.name = "a"}}, "/src/fam/02_two.cu");  // declared after b in the same file: listed after it
  r.add({.info = {.name = "lib", .anchor = true}}, "/src/fam/00_lib.cu");
  r.add({.info = {.name = "stray"}}, "/src/fam/helpers.cpp");
  EXPECT_EQ(r.names(), (std::vector<std::string>{"lib", "b", "a", "late", "stray"}));
  EXPECT_EQ(r.anchor()->info.name, "lib");
  EXPECT_EQ(r.place(*r.find("late")).step, 10);
  EXPECT_EQ(r.find("zzz"), nullptr);
  EXPECT_EQ(r.matching([](const FakeVariant& v) { return v.info.name == "a" || v.info.name == "b"; }).size(), 2u);
  EXPECT_TRUE(r.problems().empty());
  r.add({.info = {.name = "a", .summary = "again"}}, "/src/fam/11_again.cu");
  ASSERT_EQ(r.problems().size(), 1u);
  EXPECT_NE(r.problems()[0].find("'a' is declared twice: in fam/02_two.cu and in fam/11_again.cu"), std::string::npos)
      << r.problems()[0];
  EXPECT_EQ(r.find("a")->info.summary, "");  // the first declaration stays
  const auto p = r.problems({"fam/00_lib.cu", "fam/02_two.cu", "fam/05_empty.cu"});
  EXPECT_NE(std::find(p.begin(), p.end(), "fam/05_empty.cu declares no variant"), p.end());
  EXPECT_TRUE(std::any_of(p.begin(), p.end(), [](const std::string& s) { return s.find("'stray'") != std::string::npos; }));
}

// The declaration macros: one variant, and a table's rows, in declaration order.
Registry<FakeVariant>& macro_registry() {
  static Registry<FakeVariant> r("fam");
  return r;
}
KS_DECLARE_VARIANT(macro_registry(), FakeVariant{.info = {.name = "single"}});
KS_DECLARE_VARIANTS(macro_registry(), [] {
  std::vector<FakeVariant> rows;
  for (const char* name : {"row0", "row1", "row2"}) rows.push_back({.info = {.name = name, .tuning = true}});
  return rows;
});

TEST(RegistryTest, MacrosDeclareOneVariantOrEveryRowOfATable) {
  EXPECT_EQ(macro_registry().names(), (std::vector<std::string>{"single", "row0", "row1", "row2"}));
  EXPECT_TRUE(macro_registry().find("row2")->info.tuning);
  const LadderPlace& place = macro_registry().place(*macro_registry().find("row1"));
  EXPECT_EQ(place.step, -1);  // declared outside a "fam" folder: the file as the macro saw it
  EXPECT_NE(place.file.find("test_common.cpp"), std::string::npos) << place.file;
  EXPECT_TRUE(macro_registry().problems().empty());
}

// Host storage with the interface of DeviceBuffer, to watch the arena without a GPU.
struct HostStorage {
  std::vector<std::max_align_t> v;
  HostStorage() = default;
  explicit HostStorage(std::size_t n) : v(n) {}
  std::max_align_t* data() const { return const_cast<std::max_align_t*>(v.data()); }
  std::size_t bytes() const { return v.size() * sizeof(std::max_align_t); }
};

TEST(ScratchArenaTest, ASecondRequestNeverMovesTheFirst) {
  ScratchArena<HostStorage> arena;
  int waits = 0;
  auto wait = [&] { ++waits; };
  EXPECT_EQ(arena.room(), 0u);
  auto* first = static_cast<unsigned char*>(arena.take(1000));
  std::memset(first, 7, 1000);
  auto* second = static_cast<unsigned char*>(arena.take(1 << 20));  // more than the arena holds: a new block
  EXPECT_NE(first, second);
  EXPECT_EQ(first[999], 7);  // the first region is still there, untouched
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(second) % ScratchArena<HostStorage>::kAlign, 0u);
  EXPECT_TRUE(second >= first + 1000 || second + (1 << 20) <= first);  // no overlap
  // The next launch: one block holding both, after waiting for the stream once.
  arena.begin_launch(wait);
  EXPECT_EQ(waits, 1);
  const std::size_t capacity = arena.capacity();
  EXPECT_GE(capacity, 1024u + (1u << 20));
  const std::size_t room = arena.room();
  EXPECT_GE(room, 1024u + (1u << 20));
  auto* a = static_cast<unsigned char*>(arena.take(1000));
  EXPECT_EQ(arena.room(), room - 1024);  // requests are rounded up to kAlign
  auto* b = static_cast<unsigned char*>(arena.take(1 << 20));
  EXPECT_GE(b, a + 1000);
  EXPECT_EQ(arena.capacity(), capacity);  // both fitted in the room: nothing allocated
  arena.begin_launch(wait);
  EXPECT_EQ(waits, 1);  // steady state: no wait, no allocation
  EXPECT_EQ(arena.capacity(), capacity);
  EXPECT_EQ(arena.take(1000), a);
}

TEST(ProcessTest, ArgumentsTravelUnchangedAndNoShellRuns) {
  const std::string dir = ::testing::TempDir() + "ks process 'test' dir";
  std::filesystem::create_directories(dir);
  const std::string marker = dir + "/marker";
  std::filesystem::remove(marker);
  const ProgramOutput out = run_program({"printf", "%s|", "a b", "it's", "$(touch " + marker + ")", "`true`;"});
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.out, "a b|it's|$(touch " + marker + ")|`true`;|");
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_EQ(run_program({"sh", "-c", "exit 3"}).exit_code, 3);
  EXPECT_THROW(run_program({dir + "/no such program"}), std::runtime_error);
  EXPECT_EQ(find_executable("definitely-not-a-program-here"), "");
  EXPECT_NE(find_executable("sh"), "");
  EXPECT_FALSE(self_directory().empty());
}

TEST(ImageSpecTest, ParsesBuildLists) {
  const ImageSet s = parse_image_spec("sass:75,86,90;ptx:90");
  ASSERT_TRUE(s.known);
  ASSERT_EQ(s.sass.size(), 3u);
  EXPECT_EQ(s.sass[2].number, 90);
  ASSERT_EQ(s.ptx.size(), 1u);
  const ImageSet a = parse_image_spec("sass:90a;ptx:");
  EXPECT_EQ(a.sass[0].suffix, 'a');
  EXPECT_TRUE(a.ptx.empty());
  EXPECT_FALSE(parse_image_spec("unknown:native").known);
  EXPECT_THROW(parse_image_spec("75;86"), std::invalid_argument);
  EXPECT_THROW(parse_image_spec("sass:7x;ptx:"), std::invalid_argument);
}

TEST(ImageVerdictTest, SassPtxOrNone) {
  const ImageSet def = parse_image_spec("sass:75,86,90;ptx:75,86,90");
  EXPECT_EQ(image_for_device(def, 9, 0).kind, ImageKind::Sass);
  EXPECT_EQ(image_for_device(def, 9, 0).text, "SASS for sm_90: yes");
  // sm_86 SASS runs on 8.9 (same major, higher minor); sm_80 would need PTX.
  EXPECT_EQ(image_for_device(def, 8, 9).kind, ImageKind::Sass);
  EXPECT_EQ(image_for_device(def, 8, 0).kind, ImageKind::Ptx);
  const ImageVerdict jit = image_for_device(parse_image_spec("sass:75;ptx:75"), 9, 0);
  EXPECT_EQ(jit.kind, ImageKind::Ptx);
  EXPECT_NE(jit.text.find("PTX only"), std::string::npos);
  EXPECT_NE(jit.advice.find("CMAKE_CUDA_ARCHITECTURES=90"), std::string::npos);
  EXPECT_EQ(image_for_device(parse_image_spec("sass:75;ptx:"), 9, 0).kind, ImageKind::None);
  EXPECT_EQ(image_for_device(parse_image_spec("sass:90;ptx:"), 7, 5).kind, ImageKind::None);
  // Arch-specific images run only on exactly their architecture.
  EXPECT_EQ(image_for_device(parse_image_spec("sass:90a;ptx:90a"), 9, 0).kind, ImageKind::Sass);
  EXPECT_EQ(image_for_device(parse_image_spec("sass:90a;ptx:90a"), 10, 0).kind, ImageKind::None);
}

// The HIP build's list of AMD targets: code objects run on exactly their target (features after ':' aside).
TEST(ImageVerdictTest, AmdTargetsExactly) {
  const ImageSet hip = parse_image_spec("hip:gfx906,gfx90a");
  ASSERT_TRUE(hip.known);
  EXPECT_EQ(hip.gfx, (std::vector<std::string>{"gfx906", "gfx90a"}));
  EXPECT_THROW(parse_image_spec("hip:"), std::invalid_argument);
  EXPECT_THROW(parse_image_spec("hip:sm_90"), std::invalid_argument);
  DeviceFacts d;
  d.cc_major = 9;
  d.gfx_arch = "gfx90a";
  EXPECT_EQ(image_for_device(hip, d).kind, ImageKind::Sass);
  EXPECT_EQ(image_for_device(hip, d).text, "code object for gfx90a: yes");
  d.gfx_arch = "gfx908";
  const ImageVerdict no = image_for_device(hip, d);
  EXPECT_EQ(no.kind, ImageKind::None);
  EXPECT_NE(no.advice.find("KS_HIP_TARGETS=gfx908"), std::string::npos) << no.advice;
  d.gfx_arch.clear();  // an NVIDIA GPU: the compute capability decides
  EXPECT_EQ(image_for_device(parse_image_spec("sass:90;ptx:"), d).kind, ImageKind::Sass);
}

TEST(DeviceFactsTest, FormatsBandwidthAndVersions) {
  DeviceFacts d;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  EXPECT_NEAR(d.theoretical_bandwidth_gbs(), 3352.3, 0.1);
  EXPECT_EQ(format_version(12040), "12.4");
  EXPECT_EQ(format_version(13000), "13.0");
  EXPECT_EQ(fp64_ratio_text(2).substr(0, 3), "1:2");
  EXPECT_EQ(fp64_ratio_text(0), "unknown");
  d.name = "Test GPU";
  d.cc_major = 9;
  const std::string text =
      format_device_text(d, image_for_device(compiled_images(), 9, 0), LoadedImage{});
  EXPECT_NE(text.find("Test GPU"), std::string::npos);
  EXPECT_NE(text.find("3352.3 GB/s"), std::string::npos);
}

TEST(DeviceTest, NoDeviceIsAClearErrorOrDevicesAreQueryable) {
  std::string why;
  if (!gpu_available(&why)) {
    EXPECT_FALSE(why.empty());
    EXPECT_THROW(visible_device_count(), NoDeviceError);
    EXPECT_THROW(query_device(0), NoDeviceError);
    return;
  }
  const DeviceFacts d = query_device(0);
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_THROW(require_device(visible_device_count()), NoDeviceError);
  const LoadedImage li = probe_loaded_image(0);
  EXPECT_TRUE(li.ok) << li.error;
}

TEST(TimingOnGpu, RepeatsUntilQuietBatchesShortLaunchesRotatesColdInputs) {
  KS_REQUIRE_GPU();
  Stream s;
  L2Flusher flush(0);
  EXPECT_GE(flush.bytes(), 2u << 20);
  // A long launch (a flush of twice the L2, well over 50 us on any GPU): single launches, at least the
  // minimum of samples, the flush before each one when cold.
  int calls = 0, flushes = 0;
  TimingOptions o{.warmup = 2, .min_repetitions = 5, .noise_target = 0.5, .batch_below_ms = 0.0};
  const TimingStats long_run = time_on_stream(s.get(), o, {.run = [&](int) { flush.flush(s.get()); ++calls; },
                                                           .flush = [&] { ++flushes; }});
  EXPECT_EQ(long_run.batch, 1);
  EXPECT_EQ(long_run.l2, "flush");
  EXPECT_GE(long_run.repetitions(), 5);
  EXPECT_EQ(calls, 2 + long_run.repetitions());
  EXPECT_EQ(flushes, calls);
  EXPECT_GT(long_run.median_ms, 0.0);
  // A launch of a few microseconds: timed in batches behind the blocking kernel, per-launch times reported.
  DeviceBuffer<int> tiny(1);
  o.batch_below_ms = 0.05;
  const TimingStats short_run = time_on_stream(s.get(), o, {.run = [&](int) {
    CUDA_CHECK(cudaMemsetAsync(tiny.data(), 0, sizeof(int), s.get()));
  }});
  EXPECT_GT(short_run.batch, 1);
  EXPECT_TRUE(short_run.blocked);
  EXPECT_LT(short_run.median_ms, 0.05);
  // Cold and short: batches rotate over input copies that together exceed the L2 twice, when they can be made.
  std::vector<int> used;
  int made = 0;
  const TimingStats cold = time_on_stream(
      s.get(), o,
      {.run = [&](int copy) {
         used.push_back(copy);
         CUDA_CHECK(cudaMemsetAsync(tiny.data(), 0, sizeof(int), s.get()));
       },
       .flush = [&] { flush.flush(s.get()); },
       .make_copies = [&](int wanted) { return made = wanted; },
       .bytes_per_copy = 1u << 20});
  EXPECT_GT(cold.batch, 1);
  EXPECT_EQ(cold.l2, "rotate:" + std::to_string(made));
  EXPECT_GE(static_cast<double>(made) * (1u << 20), o.rotate_l2_multiple * flush.bytes() / 2);
  EXPECT_EQ(*std::max_element(used.begin(), used.end()), made - 1);
  // Blocked host work is never queued behind the blocking kernel, nor batched.
  const TimingStats host_sync = time_on_stream(s.get(), o, {.run = [&](int) { s.synchronize(); }, .blocks_host = true});
  EXPECT_EQ(host_sync.batch, 1);
  EXPECT_FALSE(host_sync.blocked);
}

// Two works in turn: one sample of each per round, so both have as many samples, each its own batch size and
// blocker; the long one (a flush of twice the L2) reads as longer per launch than the short one (a 4-byte memset)
// in every round. No work at all is refused.
TEST(TimingOnGpu, InterleavedWorksTakeOneSampleEachPerRound) {
  KS_REQUIRE_GPU();
  Stream s;
  L2Flusher flush(0);
  DeviceBuffer<int> tiny(1);
  const TimingOptions o{.warmup = 1, .min_repetitions = 6, .noise_target = 0.5};
  const std::vector<TimingStats> t = time_interleaved(
      s.get(), o,
      {{.run = [&](int) { flush.flush(s.get()); }},
       {.run = [&](int) { CUDA_CHECK(cudaMemsetAsync(tiny.data(), 0, sizeof(int), s.get())); }}});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].repetitions(), t[1].repetitions());
  EXPECT_GE(t[0].repetitions(), 6);
  EXPECT_GT(t[1].batch, t[0].batch);
  EXPECT_TRUE(t[0].blocked && t[1].blocked);
  for (int i = 0; i < t[0].repetitions(); ++i) EXPECT_GT(t[0].samples_ms[i], t[1].samples_ms[i]) << "round " << i;
  EXPECT_THROW(time_interleaved(s.get(), o, {}), std::invalid_argument);
}

}  // namespace
}  // namespace ks
