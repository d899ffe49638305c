#include "bench/ceilings.hpp"
#include "bench/cli.hpp"
#include "bench/host_timing.hpp"
#include "bench/kbench/plan.hpp"
#include "bench/kbench/results.hpp"
#include "bench/kbench/rows.hpp"
#include "bench/kbench/session.hpp"
#include "bench/parse.hpp"
#include "bench/pattern.hpp"
#include "bench/kbench/table.hpp"
#include "bench/resources.hpp"

#include "gpu_test.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

namespace ks::bench {
namespace {

// Host work through Google Benchmark: the warm-up calls, then its repetitions, each one sample of at least one
// whole iteration; each call slept 2 ms, so every sample is at least that, and CPU time (a sleeping thread uses
// almost none) is below it. An exception from the timed call reaches the caller.
TEST(TimingOnHost, GoogleBenchmarkRepetitionsAreTheSamples) {
  int calls = 0;
  const TimingStats t = time_on_host("sleep_2ms", {.warmup = 2, .repetitions = 5, .min_time_s = 0.001}, [&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  EXPECT_GE(calls, 7);
  EXPECT_EQ(t.repetitions(), 5);
  EXPECT_GE(t.min_ms, 1.99);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);
  EXPECT_LT(t.cpu_ms, 1.0);
  EXPECT_THROW(time_on_host("none", {.repetitions = 0}, [] {}), std::invalid_argument);
  EXPECT_THROW(time_on_host("throws", {}, [] { throw std::runtime_error("from the timed call"); }), std::runtime_error);
}

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

RowResult measured(const std::string& name, const std::string& family, const std::string& variant, double ms,
                   const std::string& unit, double rate, double vs_anchor, double of_ceiling) {
  RowResult r;
  r.name = name;
  r.axes.family = family;
  r.axes.variant = variant;
  r.status = "ok";
  r.timing = TimingStats::from_samples({ms, ms, ms}, 0.01);
  r.rate_unit = unit;
  r.rate = rate;
  r.vs_anchor = vs_anchor;
  r.of_ceiling = of_ceiling;
  return r;
}

std::vector<RowResult> sample_rows() {
  std::vector<RowResult> rows{
      measured("gemm/cublas/device/4096x4096x4096", "gemm", "cublas", 2.254, "TFLOP/s", 60.98, 1.0, 1.882),
      measured("gemm/dmma/device/4096x4096x4096", "gemm", "dmma", 2.403, "TFLOP/s", 57.2, 0.938, 1.765),
      measured("reduce/cub/double/n=1048576", "reduce", "cub", 0.01014, "GB/s", 834.5, 1.0, 0.27),
      measured("reduce/fast/double/n=1048576", "reduce", "fast", 0.009331, "GB/s", 907.1, 1.087, 0.295)};
  for (RowResult& r : rows) {
    if (r.axes.family == "gemm") {
      r.axes.mode = "device";
      r.axes.M = r.axes.N = r.axes.K = r.axes.lda = r.axes.ldb = r.axes.ldc = 4096;
      r.axes.alpha = 1;
      r.axes.beta = 0;
      r.axes.group = "gemm/device/4096x4096x4096";
    } else {
      r.axes.dtype = "double";
      r.axes.op = "sum";
      r.axes.n = 1048576;
      r.axes.group = "reduce/double/n=1048576";
    }
    r.axes.anchor = r.axes.variant == "cublas" || r.axes.variant == "cub";
  }
  rows[1].throttled = true;
  rows[1].throttle = "sw power cap";
  RowResult skipped;
  skipped.name = "gemm/warp_tiled/device/4096x4096x4096";
  skipped.status = "skipped";
  skipped.error = "skipped: needs compute capability 80";
  rows.push_back(skipped);
  return rows;
}

TEST(RenderTable, MarkdownConsoleAndCsv) {
  const std::vector<RowResult> rows = sample_rows();
  const std::string md = render_table(rows, TableFormat::Markdown);
  EXPECT_NE(md.find("| gemm/dmma/device/4096x4096x4096 | 2.403 | 57.2 TFLOP/s | 93.8% | 176.5% | 0% | throttled (sw power cap) |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("skipped: needs compute capability 80"), std::string::npos);
  const std::string csv = render_table(rows, TableFormat::Csv);
  EXPECT_NE(csv.find("gemm/cublas/device/4096x4096x4096,ok,2.254,60.98,TFLOP/s,1,1.882,0,3,1,false,"), std::string::npos)
      << csv;
  const std::string console = render_table(rows, TableFormat::Console);
  EXPECT_NE(console.find("100.0%"), std::string::npos) << console;
}

RunContext sample_context() {
  RunContext c;
  c.date = "2026-11-22T00:00:00Z";
  c.command_line = "kbench run";
  c.gpu.name = "Test GPU";
  c.gpu.cc_major = 9;
  c.ceilings = Ceilings{.device_read_bandwidth_gbs = 3071, .fp64_fma_tflops = 32.4};
  return c;
}

// Writes the results of sample_rows() as kbench does, to KS_RESULTS_SAMPLE when set (the Python tools' tests
// read it: tests/CMakeLists.txt), and checks the schema's fields.
TEST(ResultsFile, WritesTheSchemaForThePythonTools) {
  const char* env = std::getenv("KS_RESULTS_SAMPLE");
  const std::string path = env ? env : ::testing::TempDir() + "results-v2-sample.json";
  std::filesystem::remove(path);
  {
    ResultsFile out(path);
    EXPECT_FALSE(std::filesystem::exists(path));  // only the temporary file beside it, until commit
    RunContext c = sample_context();
    c.interrupted = "SIGINT";
    out.commit(c, sample_rows());
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string json = text.str();
  for (const char* want : {"\"schema\": \"kbench-results\"", "\"schema_version\": 2", "\"interrupted\": \"SIGINT\"",
                           "\"name\": \"Test GPU\"", "\"fp64_fma_tflops\": 32.399999999999999",
                           "\"family\": \"gemm\"", "\"variant\": \"dmma\"", "\"M\": 4096", "\"rate_unit\": \"TFLOP/s\"",
                           "\"rate\": 57.200000000000003", "\"vs_anchor\": 0.93799999999999994", "\"n\": 1048576",
                           "\"dtype\": \"double\"", "\"throttled\": true", "\"status\": \"skipped\"",
                           "\"noise_met\": true", "\"repetitions\": 3"})
    EXPECT_NE(json.find(want), std::string::npos) << want << "\n" << json.substr(0, 3000);
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(e.path().filename().string().find(".results-v2-sample.json."), std::string::npos) << e.path();
}

TEST(ResultsFile, RefusesFoldersAndMissingFoldersAndLeavesNothingUncommitted) {
  const std::string dir = ::testing::TempDir() + "ks-results-test";
  std::filesystem::create_directories(dir);
  EXPECT_THROW(ResultsFile{dir}, std::invalid_argument);
  EXPECT_THROW(ResultsFile{dir + "/no/such/folder/r.json"}, std::invalid_argument);
  EXPECT_THROW(ResultsFile{dir + "/"}, std::invalid_argument);
  { ResultsFile abandoned(dir + "/r.json"); }
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // no result, no temporary file
}

// Devices and FIFOs are refused (a run as root must not replace /dev/null); a symbolic link is written through.
TEST(ResultsFile, RefusesDevicesAndFifosAndWritesThroughALink) {
  // (Not /dev/stdout: it is whatever this process's output is, a regular file when redirected to one.)
  for (const char* dev : {"/dev/null", "/dev/full"}) EXPECT_THROW(ResultsFile{dev}, std::invalid_argument) << dev;
  const std::string dir = ::testing::TempDir() + "ks-results-link";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/real");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(ResultsFile{fifo}, std::invalid_argument);
  std::filesystem::create_symlink(dir + "/nothing", dir + "/dangling");
  EXPECT_THROW(ResultsFile{dir + "/dangling"}, std::invalid_argument);
  { std::ofstream(dir + "/real/r.json") << "old"; }
  std::filesystem::create_symlink(dir + "/real/r.json", dir + "/link.json");
  {
    ResultsFile out(dir + "/link.json");
    out.commit(sample_context(), sample_rows());
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir + "/link.json"));  // the link stays ...
  std::ifstream in(dir + "/real/r.json");                        // ... and its target holds the results
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"schema\": \"kbench-results\""), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Pattern, RefusesWhatDoesNotCompileOrIsTooLong) {
  EXPECT_NO_THROW(Pattern("dmma_.*|cublas", "--variants"));
  EXPECT_THROW(Pattern(std::string(100000, 'a'), "--variants"), std::invalid_argument);
  EXPECT_THROW(Pattern("(", "--variants"), std::invalid_argument);
  EXPECT_THROW(Pattern("(a)\\1", "--variants"), std::invalid_argument);  // no backreferences in RE2
  try {
    Pattern("(", "--filter");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--filter '(' is not a valid regular expression"), std::string::npos) << e.what();
  }
  const Pattern p("dmma(_tma)?", "--variants");
  EXPECT_TRUE(p.matches_whole("dmma_tma"));
  EXPECT_FALSE(p.matches_whole("dmma_tma_128x64"));
  EXPECT_TRUE(p.found_in("gemm/dmma_tma_128x64/device"));
  std::string group;
  EXPECT_TRUE(Pattern("sm_([0-9]+)", "x").first_group("arch = sm_90a", group));
  EXPECT_EQ(group, "90");
  EXPECT_EQ(Pattern("ks::[a-z_]+::", "x").replaced("ks::gemm::f(ks::dmma::T)", ""), "f(T)");
}

// Patterns that take exponential time in a backtracking engine (std::regex never finished the first over
// kbench's row names), each over texts of 20 to 100000 characters: every match in well under a second.
TEST(Pattern, LinearTimeOnPatternsThatExplodeInBacktrackingEngines) {
  const std::vector<std::string> patterns = {"(.*)*z", "(a+)+$", "(a|aa)+b", "(a*)*b", "(x+x+)+y", "((a+)+)+c",
                                             "(.*a){20}", "^(a?){30}a{30}$"};
  const std::vector<std::string> texts = {std::string(20, 'a'), std::string(5000, 'a') + "!",
                                          std::string(100000, 'a'), std::string(30, 'a')};
  for (const std::string& pat : patterns) {
    const Pattern p(pat, "--variants");
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& t : texts) {
      (void)p.matches_whole(t);
      (void)p.found_in(t);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(s, 1.0) << pat;
  }
  EXPECT_TRUE(Pattern("^(a?){30}a{30}$", "x").matches_whole(std::string(30, 'a')));
  EXPECT_FALSE(Pattern("(.*)*z", "x").found_in(std::string(100000, 'a')));
}

TEST(CliChecks, NumbersSayWhatIsAccepted) {
  CLI::Validator whole = cli::whole_number(1, 100);
  for (std::string bad : {"1.5", "0", "101", "-1", "", "1e3", "99999999999999999999"}) {
    std::string v = bad;
    EXPECT_NE(whole(v).find("must be a whole number from 1 to 100"), std::string::npos) << bad;
  }
  std::string ok = "42";
  EXPECT_EQ(whole(ok), "");
  CLI::Validator positive = cli::positive_number(100);
  for (std::string bad : {"0", "-3", "abc", "101", "1e3", "inf", "nan", "1e-400", "+1", "1e", ""}) {
    std::string v = bad;
    EXPECT_NE(positive(v).find("must be a number above 0"), std::string::npos) << bad;
  }
  for (std::string good : {"0.5", "1e-3", "2.5E+1", ".5", "100"}) EXPECT_EQ(positive(good), "") << good;
}

RunOptions given(RunOptions o, std::vector<std::string> names) {
  o.given = std::move(names);
  return o;
}

TEST(PlanTest, ChecksEveryInputWithoutAGpu) {
  const Plan p = make_plan(RunOptions{});
  EXPECT_TRUE(p.gemm && p.reduce && p.integral);
  EXPECT_EQ(p.gemm_sizes.size(), 3u);
  EXPECT_EQ(p.extra_modes.size(), 6u);
  EXPECT_EQ(p.timing.noise_target, 0.01);
  // The anchor first; the HIP build has none, and starts with step 01.
  EXPECT_EQ(p.gemm_variants.front()->info.name, gemm::registry().anchor() ? "cublas" : "naive");
  for (const auto* v : p.gemm_variants) EXPECT_FALSE(v->info.tuning) << v->info.name;
  RunOptions o;
  o.sizes = "";
  EXPECT_THROW(make_plan(given(o, {"--sizes"})), std::invalid_argument);
  o = RunOptions{};
  o.suite = "reduce";
  o.modes = "pinned";
  EXPECT_THROW(make_plan(given(o, {"--suite", "--mode"})), std::invalid_argument);
  o = RunOptions{};
  o.suite = "gemm";
  o.types = "int32";
  EXPECT_THROW(make_plan(given(o, {"--suite", "--types"})), std::invalid_argument);
  o = RunOptions{};
  o.suite = "reduce";
  o.block = 96;
  EXPECT_THROW(make_plan(given(o, {"--suite", "--block"})), std::invalid_argument);
  o.block = 512;
  const Plan blocks = make_plan(given(o, {"--suite", "--block"}));
  for (const auto* v : blocks.reduce_variants)
    EXPECT_EQ(block_for(*v, blocks), v->block_sizes.empty() ? reduce::kDefaultBlock : 512) << v->info.name;
  o = RunOptions{};
  o.suite = "gemm";
#if !defined(KS_HIP)  // the HIP build's DGEMM has no tuning variant and no anchor
  o.variants = "dmma_64x64";
  const Plan tuning = make_plan(given(o, {"--suite", "--variants"}));
  ASSERT_EQ(tuning.gemm_variants.size(), 2u);  // the anchor always runs
  EXPECT_EQ(tuning.gemm_variants[1]->info.name, "dmma_64x64");
#endif
}

// --interleave: GEMM rows in device mode and reduction rows; refused where no row would be timed in turn with its
// anchor; the anchor's copy of A, B and C counts against the device's memory.
TEST(PlanTest, InterleaveNeedsRowsWithAnAnchorAndRoomForItsCopy) {
  RunOptions o;
  o.suite = "gemm";
  o.sizes = "8192";
  o.interleave = true;
  const Plan p = make_plan(given(o, {"--suite", "--sizes", "--interleave"}));
  EXPECT_TRUE(p.interleave);
  const std::size_t gib = std::size_t{1} << 30;
  // 8192^3 holds 1.5 GiB: once it fits a 2.5 GiB device, twice it does not.
  RunOptions once = o;
  once.interleave = false;
  EXPECT_NO_THROW(check_memory(make_plan(given(once, {"--suite", "--sizes"})), gib * 5 / 2, gib * 5 / 2));
  try {
    check_memory(p, gib * 5 / 2, gib * 5 / 2);
    ADD_FAILURE() << "twice 1.5 GiB on a 2.5 GiB device was let through";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--interleave"), std::string::npos) << e.what();
  }
  o.modes = "pinned";
  EXPECT_THROW(make_plan(given(o, {"--suite", "--sizes", "--interleave", "--mode"})), std::invalid_argument);
  o.modes = "pinned,device";
  EXPECT_TRUE(make_plan(given(o, {"--suite", "--sizes", "--interleave", "--mode"})).interleave);
  o = RunOptions{};
  o.suite = "integral";
  o.interleave = true;
  EXPECT_THROW(make_plan(given(o, {"--suite", "--interleave"})), std::invalid_argument);
  o.suite = "reduce";
  EXPECT_TRUE(make_plan(given(o, {"--suite", "--interleave"})).interleave);
}

// The host rows run where --variants names them, as the GPU variants do: all of them without it, none for a sweep of
// one variant (the host sums took 8 s a sample at 2^30), and a pattern that names only host rows is a valid one.
TEST(PlanTest, VariantsSelectTheHostRowsToo) {
  RunOptions o;
  o.suite = "reduce";
  Plan p = make_plan(given(o, {"--suite"}));
  EXPECT_EQ(p.host_sums, (std::vector<std::string>{kHostSumRows.begin(), kHostSumRows.end()}));
  o.variants = "^fast$";
  p = make_plan(given(o, {"--suite", "--variants"}));
  EXPECT_TRUE(p.host_sums.empty());
  o.variants = "fast|eigen_sum";
  p = make_plan(given(o, {"--suite", "--variants"}));
  EXPECT_EQ(p.host_sums, std::vector<std::string>{"eigen_sum"});
  o.variants = "openmp_sum";
  p = make_plan(given(o, {"--suite", "--variants"}));
  EXPECT_EQ(p.host_sums, std::vector<std::string>{"openmp_sum"});
  EXPECT_FALSE(p.reduce_variants.empty()) << "the anchor still runs";

  o = RunOptions{};
  o.suite = "gemm";
  EXPECT_TRUE(make_plan(given(o, {"--suite"})).eigen_dgemm);
  o.variants = "naive";  // in the HIP build too
  EXPECT_FALSE(make_plan(given(o, {"--suite", "--variants"})).eigen_dgemm);
  o.variants = "naive|eigen_dgemm";
  EXPECT_TRUE(make_plan(given(o, {"--suite", "--variants"})).eigen_dgemm);
  o.suite = "shapes";
  o.variants = "eigen_dgemm";
  try {
    make_plan(given(o, {"--suite", "--variants"}));
    ADD_FAILURE() << "the shapes sweep has no Eigen rows, so this pattern names nothing";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host: eigen_dgemm, recursive_interleaved"), std::string::npos) << e.what();
  }
}

// --ops: every size in each combination, a size's combinations together; C reads as T; the rows' key names the
// ops unless NN (so NN rows keep their names).
TEST(PlanTest, OpsExpandEverySize) {
  RunOptions o;
  o.suite = "gemm";
  o.sizes = "1024,64x32x16";
  o.ops = "nn,TC";
  const Plan p = make_plan(given(o, {"--suite", "--sizes", "--ops"}));
  ASSERT_EQ(p.gemm_sizes.size(), 4u);
  EXPECT_EQ(p.gemm_sizes[0].key(), "1024x1024x1024");
  EXPECT_EQ(p.gemm_sizes[1].key(), "1024x1024x1024/TT");
  EXPECT_EQ(p.gemm_sizes[3].key(), "64x32x16/TT");
  EXPECT_EQ(p.gemm_sizes[3].ops, "TT");
  EXPECT_EQ(parse_gemm_ops("NT, tn"), (std::vector<std::string>{"NT", "TN"}));
  for (const char* bad : {"N", "NNN", "NX", "T T", "", "NN,,TT"}) {
    o.ops = bad;
    EXPECT_THROW(make_plan(given(o, {"--suite", "--ops"})), std::invalid_argument) << bad;
  }
  o.ops = "NT,nt";
  EXPECT_THROW(make_plan(given(o, {"--suite", "--ops"})), std::invalid_argument);
  o = RunOptions{};
  o.suite = "reduce";
  o.ops = "TN";
  EXPECT_THROW(make_plan(given(o, {"--suite", "--ops"})), std::invalid_argument);
}

// --suite shapes: the named sweep's sizes with their classes, dmma_tma against the anchor unless --variants says
// otherwise, no extra modes, no Eigen rows, every row labelled with its class; --sizes replaces the sweep.
TEST(PlanTest, ShapeSuiteIsTheNamedSweep) {
  RunOptions o;
  o.suite = "shapes";
  const Plan p = make_plan(given(o, {"--suite"}));
  EXPECT_TRUE(p.gemm && p.shape_suite && !p.reduce && !p.integral);
  ASSERT_EQ(p.gemm_sizes.size(), kShapeSuite.size());
  std::set<std::string> classes;
  for (std::size_t i = 0; i < p.gemm_sizes.size(); ++i) {
    EXPECT_EQ(p.gemm_sizes[i].M, kShapeSuite[i].M);
    EXPECT_EQ(p.gemm_sizes[i].shape_class, kShapeSuite[i].shape_class);
    classes.insert(p.gemm_sizes[i].shape_class);
  }
  for (const char* c : {"square", "rank-k", "small C, deep K", "few rows", "few columns", "matrix-vector", "odd"})
    EXPECT_EQ(classes.count(c), 1u) << c;
#if defined(KS_HIP)  // no anchor: the fastest step alone
  ASSERT_EQ(p.gemm_variants.size(), 1u);
  EXPECT_EQ(p.gemm_variants[0]->info.name, "warp_tiled");
  EXPECT_TRUE(p.extra_modes.empty());
  EXPECT_EQ(build_rows(p).size(), kShapeSuite.size());
  o.variants = "naive|register_tiled|warp_tiled";
#else
  ASSERT_EQ(p.gemm_variants.size(), 2u);
  EXPECT_EQ(p.gemm_variants[0]->info.name, "cublas");
  EXPECT_EQ(p.gemm_variants[1]->info.name, "dmma_tma");
  EXPECT_TRUE(p.extra_modes.empty());
  const std::vector<Row> rows = build_rows(p);
  EXPECT_EQ(rows.size(), 2 * kShapeSuite.size());
  o.variants = "dmma|dmma_tma";
#endif
  o.sizes = "1000x64x3000";
  const Plan q = make_plan(given(o, {"--suite", "--variants", "--sizes"}));
  EXPECT_EQ(q.gemm_variants.size(), 3u);
  ASSERT_EQ(q.gemm_sizes.size(), 1u);
  EXPECT_TRUE(q.gemm_sizes[0].shape_class.empty());
}

TEST(RenderTable, ClassMeansAreGeometricPerClassAndOverall) {
  auto row = [](const std::string& variant, const std::string& cls, int m, double vs) {
    RowResult r = measured("gemm/" + variant + "/device/x", "gemm", variant, 1, "TFLOP/s", 1, vs, -1);
    r.axes.M = m, r.axes.N = 64, r.axes.K = 32, r.axes.op = "NN";
    r.axes.anchor = variant == "cublas";
    r.labels["shape_class"] = cls;
    return r;
  };
  std::vector<RowResult> rows{row("cublas", "square", 1, 1.0), row("dmma_tma", "square", 1, 1.21),
                              row("dmma_tma", "square", 2, 1.0), row("dmma_tma", "odd", 3, 0.64)};
  RowResult failed = row("dmma_tma", "odd", 4, 2.0);
  failed.status = "failed";
  rows.push_back(failed);
  const std::string md = render_class_means(rows, true);
  EXPECT_NE(md.find("| dmma_tma | square | 2 | 1.100 | 100.0% (2x64x32) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| dmma_tma | odd | 1 | 0.640 | 64.0% (3x64x32) |"), std::string::npos) << md;
  // (1.21 x 1.0 x 0.64)^(1/3) = 0.9178...
  EXPECT_NE(md.find("| dmma_tma | all | 3 | 0.918 | 64.0% (3x64x32) |"), std::string::npos) << md;
  EXPECT_EQ(md.find("| cublas"), std::string::npos) << md;
  EXPECT_NE(render_class_means(rows, false).find("geo mean"), std::string::npos);
  EXPECT_EQ(render_class_means(sample_rows(), true), "");  // no shape classes
}

// The floor is far below any real memory system: the sanitized build at -O0 (tests/sanitize_host.sh), beside another
// program on a 2-core machine, measured 0.079 GB/s on one thread.
TEST(HostCeilings, ElementwiseBandwidthIsMeasured) {
  Ceilings c;
  measure_host_ceilings(c, 3, std::size_t(1) << 22);
  EXPECT_GT(c.host_single_thread_gbs, 0.01);
  EXPECT_LT(c.host_single_thread_gbs, 10000.0);
  EXPECT_GT(c.host_openmp_gbs, 0.01);
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

// cuobjdump's output is input: numbers beyond any GPU's and absurd lines are refused with a message, a long name
// (50 KB, which std::regex's recursion did not survive) is read.
TEST(Resources, RefusesOutOfRangeNumbersAndReadsLongLines) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string d = kDump;
    d.replace(d.find(from), from.size(), to);
    return d;
  };
  for (const auto& [from, to, says] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"REG:126", "REG:99999999999", "REG '99999999999' is out of range"},
           {"arch = sm_90", "arch = sm_99999999999", "arch '99999999999' is out of range"},
           {"SHARED:25600", "SHARED:2147483000", "SHARED '2147483000' is out of range"},
           {"LOCAL:8", "LOCAL:99999999999999999999999999", "LOCAL '99999999999999999999' is out of range"}}) {
    try {
      parse_resource_usage(with(from, to));
      ADD_FAILURE() << to << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
  const std::string long_name = "_ZN2ks4gemm" + std::to_string(50000) + std::string(50000, 'x') + "Ev";
  const auto k = parse_resource_usage(with("_ZN2ks4gemm21register_tiled_kernelENS0_8GemmArgsE", long_name));
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[1].mangled, long_name);
  EXPECT_EQ(k[1].registers, 126);
  EXPECT_THROW(parse_resource_usage(std::string(2 << 20, 'R')), std::invalid_argument);
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

// --interleave on the GPU: a GEMM row and a reduction row each carry the anchor's median from their own rounds and
// take their ratio from it; the ratio to the anchor's row is kept beside it; the anchor rows are timed alone.
TEST(InterleaveOnGpu, RowsTakeTheirRatioFromTheAnchorsSamplesOfTheirRounds) {
  KS_REQUIRE_GPU();
  RunOptions gemm_rows;
  gemm_rows.suite = "gemm";
  gemm_rows.sizes = "200x136x72";
  gemm_rows.variants = "register_tiled";
  gemm_rows.repetitions = 4;
  gemm_rows.interleave = true;
  RunOptions reduce_rows = gemm_rows;
  reduce_rows.suite = "reduce";
  reduce_rows.sizes = "2^16";
  reduce_rows.types = "double";
  reduce_rows.variants = "fast";
  std::vector<RowResult> results;
  for (const RunOptions& o : {gemm_rows, reduce_rows}) {
    std::vector<std::string> named{"--suite", "--sizes", "--variants", "--interleave"};
    if (!o.types.empty()) named.push_back("--types");
    const Plan p = make_plan(given(o, named));
    Session session(p, query_device(0), false);
    for (const Row& row : build_rows(p))
      if (row.axes.family == "gemm" || row.axes.family == "reduce") session.run_row(row);
    results.insert(results.end(), session.results().begin(), session.results().end());
  }
  int interleaved = 0;
  const bool has_gemm_anchor = gemm::registry().anchor() != nullptr;
  for (const RowResult& r : results) {
    ASSERT_TRUE(r.ok()) << r.name << ": " << r.error;
    const bool beside = r.extra.count("interleaved_anchor_ms") > 0;
    const bool anchored = r.axes.family == "gemm" ? has_gemm_anchor : true;
    EXPECT_EQ(beside, !r.axes.anchor && anchored) << r.name;
    if (!beside) continue;
    ++interleaved;
    EXPECT_GE(r.timing.repetitions(), 4) << r.name;
    EXPECT_GT(r.extra.at("interleaved_anchor_ms"), 0.0) << r.name;
    EXPECT_DOUBLE_EQ(r.vs_anchor, r.extra.at("interleaved_anchor_ms") / r.timing.median_ms) << r.name;
    EXPECT_GT(r.extra.at("vs_anchor_alone"), 0.0) << r.name;
    EXPECT_GT(r.extra.at("vs_anchor_rounds"), 0.0) << r.name;
  }
  EXPECT_EQ(interleaved, has_gemm_anchor ? 2 : 1);
}

}  // namespace
}  // namespace ks::bench
