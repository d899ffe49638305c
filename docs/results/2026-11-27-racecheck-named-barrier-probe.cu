// Does compute-sanitizer racecheck order shared-memory accesses across bar.arrive / bar.sync hand-overs?
// The hand-over of residue_products_kernel: 96 storers (warps 1-3) and 256 consumers (warps 4-11); consumers
// bar.sync `free` (the storers bar.arrive on it once first and after each read), write the tile, bar.arrive `full`;
// storers bar.sync `full`, read, bar.arrive `free`. mode 0: that protocol. mode 1: the storers skip waiting on
// `full` and the consumers do not arrive on it (a real race).
#include <cstdio>
#include <cstdlib>
constexpr int kFull = 1, kFree = 2, kCount = 256 + 96;
template <int Id> __device__ void bsync() { asm volatile("bar.sync %0, %1;" ::"n"(Id), "n"(kCount) : "memory"); }
template <int Id> __device__ void barrive() { asm volatile("bar.arrive %0, %1;" ::"n"(Id), "n"(kCount) : "memory"); }

__global__ void probe(int units, int mode, unsigned* out) {
  __shared__ unsigned tile[256];
  const int warp = threadIdx.x / 32;
  if (warp == 0) return;
  if (warp < 4) {
    const int s = threadIdx.x - 32;
    barrive<kFree>();
    unsigned acc = 0;
    for (int u = 0; u < units; ++u) {
      if (mode == 0) bsync<kFull>();
      for (int i = s; i < 256; i += 96) acc += tile[i];
      if (u + 1 < units) barrive<kFree>();
    }
    out[blockIdx.x * 96 + s] = acc;
    return;
  }
  const int c = threadIdx.x - 128;
  for (int u = 0; u < units; ++u) {
    bsync<kFree>();
    tile[c] = u * 1000 + c;
    if (mode == 0) barrive<kFull>();
  }
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0;
  unsigned* out;
  cudaMalloc(&out, 4 * 96 * sizeof(unsigned));
  probe<<<4, 384>>>(8, mode, out);
  fprintf(stderr, "mode %d: %s\n", mode, cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
