#include "common/device_info.hpp"
#include "common/json.hpp"
#include "common/random.hpp"
#include "common/registry.hpp"
#include "common/timing.hpp"
#include "gpu_test.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace ks {
namespace {

TEST(TimingStatsTest, MedianMinMax) {
  const TimingStats odd = TimingStats::from_samples({5, 1, 3});
  EXPECT_DOUBLE_EQ(odd.median_ms, 3);
  EXPECT_DOUBLE_EQ(odd.min_ms, 1);
  EXPECT_DOUBLE_EQ(odd.max_ms, 5);
  EXPECT_DOUBLE_EQ(TimingStats::from_samples({4, 1, 3, 2}).median_ms, 2.5);
  EXPECT_THROW(TimingStats::from_samples({}), std::invalid_argument);
}

TEST(TimingOnHost, WarmsUpThenTimesEachRepetition) {
  int calls = 0;
  const TimingStats t = time_on_host({2, 5}, [&] { ++calls; });
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(t.samples_ms.size(), 5u);
  EXPECT_GE(t.min_ms, 0.0);
  EXPECT_THROW(time_on_host({0, 0}, [] {}), std::invalid_argument);
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
  VariantInfo info;
};

TEST(RegistryTest, OrdersByRankFindsAndRejectsDuplicates) {
  auto& r = Registry<FakeVariant>::instance();
  r.add({{"b", "", 0, 2}});
  r.add({{"a", "", 0, 3}});
  r.add({{"lib", "", 0, 1, true}});
  EXPECT_EQ(r.names(), (std::vector<std::string>{"lib", "b", "a"}));
  EXPECT_EQ(r.anchor()->info.name, "lib");
  EXPECT_EQ(r.find("a")->info.rank, 3);
  EXPECT_EQ(r.find("zzz"), nullptr);
  EXPECT_EQ(r.matching("a|b").size(), 2u);
  EXPECT_THROW(r.add({{"a", "", 0, 9}}), std::logic_error);
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

TEST(TimingOnGpu, L2FlushAndEventTimer) {
  KS_REQUIRE_GPU();
  Stream s;
  L2Flusher flush(0);
  EXPECT_GE(flush.bytes(), 2u << 20);
  int calls = 0, prepares = 0;
  const TimingStats t = time_on_stream(
      s.get(), {2, 5}, [&] { flush.flush(s.get()); ++calls; }, [&] { ++prepares; });
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(prepares, 7);
  EXPECT_EQ(t.samples_ms.size(), 5u);
  EXPECT_GT(t.median_ms, 0.0);
}

}  // namespace
}  // namespace ks
