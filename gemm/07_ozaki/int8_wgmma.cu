// ozaki's INT8 products on Hopper's warpgroup MMA (wgmma), each reduced modulo its modulus before it leaves the
// block (products.hpp: residue_products). Compute capability 9.0; the file builds for sm_90a alone (setmaxnreg,
// wgmma), and elsewhere only its host side, which then says why it does not run.
//
// Why a kernel of our own: cuBLASLt's products leave INT32 planes, four bytes per modulus per element of C, that
// the recombination reads back (15 GB at 16384^3 with 14 moduli: 5.7-6.4 ms of ozaki's 94.5; docs/gemm-notes.md,
// step 30). Reduced in the products' epilogue, each is one byte: a quarter of the recombination's reads and of
// the products' writes. The residue is exact whatever kernel forms the product, so both routes give C's bits.
//
// One block per SM, each taking 128 x 256 tiles of one modulus' product in turn (moduli outermost, each
// modulus' tiles in the grouped order of gemm/kernel_common.cuh). The producer warp copies A's 128 x 128 and B's 256 x 128 k-block (int8,
// K-major: 128-byte rows, swizzled by the TMA's 128-byte pattern, which is the layout wgmma's 128-byte swizzle
// mode reads) into one of four stages; two consumer warpgroups each multiply 64 rows of A by all 256 columns of
// B, wgmma.m64n256k32 with INT32 accumulators (128 registers a thread), four per k-block, and free a stage once
// the MMAs after it are issued and its own are complete (one group in flight).
//
// The epilogue is where the tensor pipe waits (without one the kernel runs at 99% of its MMA cycles; with the
// first version's, 86-88%: docs/gemm-notes.md, steps 44 and 45), so the consumers do only what needs their
// registers: each reduces its accumulators modulo m_l (product_residue, five operations), packs the four residues
// of two rows and two columns into a word and stores it into the residue tile in shared memory (beside the
// stages, which the producer is already filling with the next tile's k-blocks), then starts the next tile. The producer
// warpgroup's other three warps, idle until then, take the tile from there while the consumers multiply: they
// transpose its words by bytes into words of four rows of one column and write them to the column-major byte
// planes. Two named barriers hand the tile over: `full` (the consumers arrive, the storers wait) and `free` (the
// other way).
#include "gemm/07_ozaki/products.hpp"
#include "gemm/hopper.cuh"
#include "gemm/kernel_common.cuh"

#include "common/per_device.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace ks::gemm::ozaki {
namespace wg {

constexpr int BM = 128, BN = 256, BK = 128, STAGES = 4;  // BK: k per stage (bytes of a row)
constexpr int kThreads = 384;                            // the producer warpgroup, then two consumer warpgroups
constexpr int kStorers = 96;                             // the producer warpgroup's warps 1-3
constexpr int kABytes = BM * BK, kBBytes = BN * BK, kStageBytes = kABytes + kBBytes;
// The residue tile: word (p, s) holds the residues of rows 16 (s / 8) + s % 8 and that + 8 of columns 2 p and
// 2 p + 1 (p < BN / 2, s < BM / 2), at p * kSlots + (s ^ 8 (p % 4)): the XOR spreads a warp's 32 words, four
// column pairs by eight rows, over all 32 banks.
constexpr int kSlots = BM / 2, kTileWords = (BN / 2) * kSlots;
// The stages, the residue tile beside them (the next unit's copies land while the last one's residues are
// stored), alignment to 1024 (the swizzle's atom).
constexpr int kSmemBytes = STAGES * kStageBytes + 4 * kTileWords + 1024;
static_assert(kSmemBytes <= 227 * 1024, "Hopper's largest shared memory a block");
// Named barriers (0 is __syncthreads'): the residue tile is full / free again; the consumers and the storers.
constexpr int kTileFull = 1, kTileFree = 2, kHandOver = 256 + kStorers;

struct ModConstants {
  ProductResidueConstants k[kMaxModuli];
};

#if defined(KS_OZAKI_WGMMA_SM90A)

using namespace tma;

// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") for a K-major operand in 128-byte rows
// swizzled by 128 bytes: the start address, a leading byte offset of 16 (unused by this layout), 1024 bytes
// between groups of 8 rows, swizzle mode 1 (128 bytes).
__device__ __forceinline__ uint64_t descriptor(uint32_t addr) {
  return static_cast<uint64_t>((addr & 0x3FFFF) >> 4) | (1ull << 16) | (static_cast<uint64_t>(1024 >> 4) << 32) |
         (1ull << 62);
}

// d (+)= A (64 x 32, at da) B (32 x 256, at db), INT8 in, INT32 accumulated; d is overwritten where accumulate is 0.
__device__ __forceinline__ void mma(int (&d)[128], uint64_t da, uint64_t db, int accumulate) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},"
      " %128, %129, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]),
        "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]),
        "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]),
        "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]),
        "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]),
        "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]),
        "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]),
        "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]),
        "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]),
        "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]),
        "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]),
        "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]),
        "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
      : "l"(da), "l"(db), "r"(accumulate));
}
__device__ __forceinline__ void mma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void mma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void mma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving reads of the accumulators above the wait that completes them.
__device__ __forceinline__ void pin(int (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

template <int Id>
__device__ __forceinline__ void named_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(Id), "n"(kHandOver) : "memory");
}
template <int Id>
__device__ __forceinline__ void named_arrive() {
  asm volatile("bar.arrive %0, %1;\n" ::"n"(Id), "n"(kHandOver) : "memory");
}

// Four rows of one column from four words of the residue tile (consecutive rows, byte k = 2 h + e of each: row
// + 8 h, column + e): a 4 x 4 transpose of bytes, o[k] = byte k of a, b, c, d.
__device__ __forceinline__ void transpose_bytes(uint4 v, uint32_t (&o)[4]) {
  const uint32_t ab_lo = __byte_perm(v.x, v.y, 0x5140), ab_hi = __byte_perm(v.x, v.y, 0x7362);
  const uint32_t cd_lo = __byte_perm(v.z, v.w, 0x5140), cd_hi = __byte_perm(v.z, v.w, 0x7362);
  o[0] = __byte_perm(ab_lo, cd_lo, 0x5410);
  o[1] = __byte_perm(ab_lo, cd_lo, 0x7632);
  o[2] = __byte_perm(ab_hi, cd_hi, 0x5410);
  o[3] = __byte_perm(ab_hi, cd_hi, 0x7632);
}

// The tile of unit u: the modulus (outermost), then the tile row and column in the grouped order.
__device__ __forceinline__ void unit_tile(long long u, long long tiles, int tiles_m, int tiles_n, int& l, int& tm,
                                          int& tn) {
  l = static_cast<int>(u / tiles);
  grouped_tile(u % tiles, tiles_m, tiles_n, tm, tn);
}

// Persistent: block b takes units b, b + gridDim.x, ... The producer runs ahead into the next unit's k-blocks and
// the storers write the last unit's residues while the consumers multiply.
__global__ void __launch_bounds__(kThreads, 1)
    residue_products_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                            unsigned char* out, int ldp, int N, int k_blocks, std::size_t plane, int tiles_m,
                            int tiles_n, int count, const __grid_constant__ ModConstants mc) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ uint64_t full[STAGES], empty[STAGES];
  unsigned char* smem = smem_raw + ((1024 - smem_addr(smem_raw) % 1024) % 1024);
  uint32_t* tile_words = reinterpret_cast<uint32_t*>(smem + STAGES * kStageBytes);  // the residue tile
  const uint32_t base = smem_addr(smem);
  const long long tiles = static_cast<long long>(tiles_m) * tiles_n, units = tiles * count;
  const int warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      bar_init(smem_addr(&full[s]), 1);
      bar_init(smem_addr(&empty[s]), 2);  // one arrive per consumer warpgroup
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  int stage = 0;
  uint32_t phase = 0;
  if (warp < 4) {  // the producer warpgroup
    regs_dec<40>();
    if (threadIdx.x == 0) {  // the producer
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_a)) : "memory");
      asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map_b)) : "memory");
      for (long long u = blockIdx.x; u < units; u += gridDim.x) {
        int l, tm, tn;
        unit_tile(u, tiles, tiles_m, tiles_n, l, tm, tn);
        for (int kb = 0; kb < k_blocks; ++kb) {
          bar_wait(smem_addr(&empty[stage]), phase ^ 1);  // both consumers are done with this stage
          const uint32_t bar = smem_addr(&full[stage]), sa = base + stage * kStageBytes;
          bar_arrive_expect(bar, kStageBytes);  // zero-filled parts of edge boxes count too
          tma_load_3d(sa, &map_a, kb * BK, tm * BM, l, bar);
          tma_load_3d(sa + kABytes, &map_b, kb * BK, tn * BN, l, bar);
          if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    } else if (warp > 0) {  // the storers
      // Item (p, sg): the residue tile's slots 8 sg .. 8 sg + 7 of column pair p, rows 16 sg .. 16 sg + 15 of
      // columns 2 p and 2 p + 1, eight words of four rows each. The planes have ldp rows (a multiple of 4), so a
      // word is either whole inside a plane's column or past its end.
      const int s = threadIdx.x - 32;
      named_arrive<kTileFree>();  // nothing to read yet
      for (long long u = blockIdx.x; u < units; u += gridDim.x) {
        int l, tm, tn;
        unit_tile(u, tiles, tiles_m, tiles_n, l, tm, tn);
        named_sync<kTileFull>();
        unsigned char* dst = out + static_cast<std::size_t>(l) * plane;
        for (int item = s; item < kTileWords / 8; item += kStorers) {
          const int p = item / 8, sg = item % 8, n = tn * BN + 2 * p;
          const uint4* src = reinterpret_cast<const uint4*>(tile_words + p * kSlots + ((8 * sg) ^ (8 * (p % 4))));
#pragma unroll
          for (int half = 0; half < 2; ++half) {  // rows + 4 half .. + 3 of each word
            uint32_t o[4];
            transpose_bytes(src[half], o);
#pragma unroll
            for (int k = 0; k < 4; ++k) {
              const int row = tm * BM + 16 * sg + 8 * (k / 2) + 4 * half;
              if (row < ldp && n + k % 2 < N)
                *reinterpret_cast<uint32_t*>(dst + static_cast<std::size_t>(n + k % 2) * ldp + row) = o[k];
            }
          }
        }
        if (u + gridDim.x < units) named_arrive<kTileFree>();
      }
    }
    return;
  }
  regs_inc<232>();
  const int g = warp / 4 - 1;  // this consumer warpgroup: rows 64 g .. 64 g + 63 of the tile
  const int lane = threadIdx.x % 32;
  // Accumulator 4 i + 2 h + e of lane (warp w of the group) is element (16 w + lane / 4 + 8 h, 8 i + 2 (lane % 4) + e)
  // of the group's 64 x 256 piece (the wgmma D fragment): the four of one i are slot 32 g + 8 w + lane / 4 of
  // column pair 4 i + lane % 4 in the residue tile.
  const int q = lane % 4, slot = g * 32 + (warp % 4) * 8 + lane / 4;
  int d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0;
  for (long long u = blockIdx.x; u < units; u += gridDim.x) {
    const int l = static_cast<int>(u / tiles);
    int previous = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      bar_wait(smem_addr(&full[stage]), phase);
      const uint32_t sa = base + stage * kStageBytes + g * 64 * BK, sb = base + stage * kStageBytes + kABytes;
      mma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 32; ++kk)
        mma(d, descriptor(sa + 32 * kk), descriptor(sb + 32 * kk), kb > 0 || kk > 0);
      mma_commit();
      mma_wait<1>();  // the previous k-block's MMAs are complete: its stage may be refilled
      if (kb > 0 && threadIdx.x % 128 == 0) bar_arrive(smem_addr(&empty[previous]));
      previous = stage;
      if (++stage == STAGES) {
        stage = 0;
        phase ^= 1;
      }
    }
    mma_wait<0>();
    pin(d);
    if (threadIdx.x % 128 == 0) bar_arrive(smem_addr(&empty[previous]));
    const ProductResidueConstants k = mc.k[l];
    named_sync<kTileFree>();  // the storers are done reading the last unit's residue tile
#pragma unroll
    for (int i = 0; i < 32; ++i) {
      const unsigned r0 = product_residue(d[4 * i], k), r1 = product_residue(d[4 * i + 1], k);
      const unsigned r2 = product_residue(d[4 * i + 2], k), r3 = product_residue(d[4 * i + 3], k);
      tile_words[(4 * i + q) * kSlots + (slot ^ (8 * q))] =
          __byte_perm(__byte_perm(r0, r1, 0x0040), __byte_perm(r2, r3, 0x0040), 0x5410);
    }
    named_arrive<kTileFull>();
  }
}

#endif  // KS_OZAKI_WGMMA_SM90A

}  // namespace wg

namespace {

#if defined(KS_OZAKI_WGMMA_SM90A)
constexpr bool kBuilt = true;
#else
constexpr bool kBuilt = false;
#endif

// Whether the kernel runs on a device (refusal empty), else why not; its SMs (one block each).
struct Readiness {
  std::string refusal;
  int sms = 0;
};
Readiness read_readiness(int device) {
  if (!kBuilt) return {"built without sm_90a code"};
  int major = 0, minor = 0, optin = 0, sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (major != 9 || minor != 0) return {"its sm_90a code runs on compute capability 9.0 only"};
  if (optin < wg::kSmemBytes) return {"the device offers less shared memory a block than it needs"};
#if defined(KS_OZAKI_WGMMA_SM90A)
  CUDA_CHECK(cudaFuncSetAttribute(wg::residue_products_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  wg::kSmemBytes));
#endif
  return {"", sms};
}
Readiness readiness() {
  static PerDevice<Readiness> cache(read_readiness);
  return cache.get();
}

#if defined(KS_OZAKI_WGMMA_SM90A)
// A three-dimensional int8 map: `rows` rows of Kp bytes per plane, `planes` planes `stride` bytes apart, read in
// boxes of 128 bytes x box_rows rows of one plane, swizzled by 128 bytes; zeros outside.
CUtensorMap plane_map(const signed char* p, int Kp, int rows, int planes, std::size_t stride, int box_rows) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(Kp), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(planes)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(Kp), static_cast<cuuint64_t>(stride)};
  const cuuint32_t box[3] = {wg::BK, static_cast<cuuint32_t>(box_rows), 1};
  return tma::tiled_map(CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, p, dims, strides, box, "ozaki", [&] {
    return std::to_string(planes) + " planes of " + std::to_string(rows) + " x " + std::to_string(Kp);
  });
}

wg::ModConstants mod_constants() {
  wg::ModConstants k{};
  for (int l = 0; l < kMaxModuli; ++l) k.k[l] = product_residue_constants(l);
  return k;
}
#endif

}  // namespace

std::string residue_products_refusal() { return readiness().refusal; }

void residue_products(cudaStream_t stream, int N, const Workspace& w, const signed char* a8, const signed char* b8,
                      unsigned char* out, int count) {
  const Readiness r = readiness();
  if (!r.refusal.empty()) throw std::logic_error("ozaki: residue_products called where " + r.refusal);
  const int tiles_m = ceil_div(w.ldp, wg::BM), tiles_n = ceil_div(N, wg::BN), k_blocks = ceil_div(w.Kp, wg::BK);
  const long long units = static_cast<long long>(tiles_m) * tiles_n * count;
  const auto blocks = static_cast<unsigned>(std::min<long long>(units, r.sms));
#if defined(KS_OZAKI_WGMMA_SM90A)
  static const wg::ModConstants constants = mod_constants();
  const CUtensorMap map_a = plane_map(a8, w.Kp, w.ldp, count, w.a_stride, wg::BM);
  const CUtensorMap map_b = plane_map(b8, w.Kp, N, count, w.b_stride, wg::BN);
  wg::residue_products_kernel<<<blocks, wg::kThreads, wg::kSmemBytes, stream>>>(
      map_a, map_b, out, w.ldp, N, k_blocks, w.p_stride / 4, tiles_m, tiles_n, count, constants);
  CUDA_CHECK(cudaGetLastError());
#else
  (void)stream, (void)a8, (void)b8, (void)out;
#endif
}

}  // namespace ks::gemm::ozaki
