#include "bench/ceilings.hpp"
#include "bench/parse.hpp"
#include "bench/report.hpp"
#include "bench/resources.hpp"

#include <gtest/gtest.h>

namespace ks::bench {
namespace {

TEST(ParseCounts, PlainPowersAndSuffixes) {
  EXPECT_EQ(parse_counts("1000"), (std::vector<std::size_t>{1000}));
  EXPECT_EQ(parse_counts("2^24, 16M,1k,1G"),
            (std::vector<std::size_t>{1u << 24, 16u << 20, 1024, std::size_t(1) << 30}));
}

TEST(ParseCounts, RejectsMalformedZeroNegativeAndHuge) {
  for (const char* bad : {"", "0", "-5", "1e30", "2^64", "2^41", "18446744073709551616", "12Q", "1,,2", "1,",
                          "abc", "2^", "M", "1.5", "4096x4096", "\xc3\xa9", " "})
    EXPECT_THROW(parse_counts(bad), std::invalid_argument) << bad;
}

TEST(ParseGemmSizes, SquaresAndTriples) {
  const auto s = parse_gemm_sizes("1024,256x512x4096");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].str(), "1024x1024x1024");
  EXPECT_EQ(s[1].M, 256);
  EXPECT_EQ(s[1].N, 512);
  EXPECT_EQ(s[1].K, 4096);
}

TEST(ParseGemmSizes, RejectsBadForms) {
  for (const char* bad : {"0", "1x2", "1x2x3x4", "1xx2", "x1x2", "1x2x", "-4", "2147483648", "4096,", "a",
                          "1e3"})
    EXPECT_THROW(parse_gemm_sizes(bad), std::invalid_argument) << bad;
}

TEST(RenderTable, MarkdownConsoleAndCsv) {
  const std::vector<TableRow> rows{{"gemm/cublas/device/4096x4096x4096", 2.5, "TFLOP/s", 55.0, 1.0, 1.65, ""},
                                   {"gemm/naive/device/4096x4096x4096", 250, "TFLOP/s", 0.55, 0.01, 0.016, ""},
                                   {"gemm/dmma/device/4096x4096x4096", 0, "", 0, -1, -1, "skipped: needs 8.0"}};
  const std::string md = render_table(rows, TableFormat::Markdown);
  EXPECT_NE(md.find("| gemm/naive/device/4096x4096x4096 | 250 | 0.55 TFLOP/s | 1.0% | 1.6% |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("skipped: needs 8.0"), std::string::npos);
  const std::string csv = render_table(rows, TableFormat::Csv);
  EXPECT_NE(csv.find("gemm/cublas/device/4096x4096x4096,2.5,55,TFLOP/s,1,1.65,"), std::string::npos) << csv;
  const std::string console = render_table(rows, TableFormat::Console);
  EXPECT_NE(console.find("100.0%"), std::string::npos) << console;
}

TEST(HostCeilings, ElementwiseBandwidthIsMeasured) {
  Ceilings c;
  measure_host_ceilings(c, 3, std::size_t(1) << 22);
  EXPECT_GT(c.host_single_thread_gbs, 0.1);
  EXPECT_LT(c.host_single_thread_gbs, 10000.0);
  EXPECT_GT(c.host_openmp_gbs, 0.1);
  EXPECT_LT(c.host_openmp_gbs, 10000.0);
}

}  // namespace
}  // namespace ks::bench

namespace ks::bench {
namespace {

// The shape of `cuobjdump --dump-resource-usage`: PTX sections carry no resources, ELF sections do.
const char* kDump = R"(
Fatbin ptx code:
================
arch = sm_90
identifier = /src/gemm/naive.cu

Fatbin elf code:
================
arch = sm_75
code version = [1,8]
identifier = /src/gemm/naive.cu

Resource usage:
 Common:
  GLOBAL:0
 Function _ZN2ks4gemm12naive_kernelILi16EEEvNS0_8GemmArgsE:
  REG:40 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:432 TEXTURE:0 SURFACE:0 SAMPLER:0

Fatbin elf code:
================
arch = sm_90
identifier = /src/gemm/register_tiled.cu

Resource usage:
 Function _ZN2ks4gemm21register_tiled_kernelENS0_8GemmArgsE:
  REG:126 STACK:16 SHARED:25600 LOCAL:8 CONSTANT[0]:608 TEXTURE:0 SURFACE:0 SAMPLER:0
)";

TEST(Resources, ParsesElfSectionsPerArchitecture) {
  const auto k = parse_resource_usage(kDump);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].arch, 75);
  EXPECT_EQ(k[0].source, "naive.cu");
  EXPECT_EQ(k[0].registers, 40);
  EXPECT_NE(k[0].name.find("naive_kernel<16>"), std::string::npos) << k[0].name;
  EXPECT_EQ(k[1].arch, 90);
  EXPECT_EQ(k[1].registers, 126);
  EXPECT_EQ(k[1].stack, 16);
  EXPECT_EQ(k[1].shared, 25600);
  EXPECT_EQ(k[1].local, 8);
}

TEST(Resources, OccupancyFollowsEachArchitecturesLimits) {
  KernelResources k;
  k.registers = 32;
  // 256 threads x 32 registers: sm_90 holds 8 such blocks (2048 threads), sm_75 only 4 (1024 threads).
  EXPECT_EQ(occupancy(*sm_limits(90), k, 256).blocks, 8);
  EXPECT_DOUBLE_EQ(occupancy(*sm_limits(90), k, 256).fraction, 1.0);
  EXPECT_EQ(occupancy(*sm_limits(75), k, 256).blocks, 4);
  EXPECT_EQ(occupancy(*sm_limits(75), k, 256).limited_by, "threads");
  // 126 registers round up to 128 per thread: 32 Ki registers per 256-thread block, 2 blocks of 64 Ki.
  k.registers = 126;
  const Occupancy r = occupancy(*sm_limits(90), k, 256);
  EXPECT_EQ(r.blocks, 2);
  EXPECT_EQ(r.limited_by, "registers");
  EXPECT_DOUBLE_EQ(r.fraction, 0.25);
  // Shared memory: 48 KiB + 1 KiB reserved per block fit twice in sm_86's 100 KiB.
  k.registers = 32;
  k.shared = 48 * 1024;
  EXPECT_EQ(occupancy(*sm_limits(86), k, 128).blocks, 2);
  EXPECT_EQ(occupancy(*sm_limits(86), k, 128).limited_by, "shared memory");
  EXPECT_EQ(sm_limits(61), nullptr);
}

}  // namespace
}  // namespace ks::bench
