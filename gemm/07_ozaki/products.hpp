// ozaki's INT8 products (gemm/07_ozaki): host code, cuBLASLt.
#pragma once

#include "common/exec_context.hpp"
#include "gemm/07_ozaki/ozaki.hpp"

#include <string>

namespace ks::gemm::ozaki {

// The INT8 x INT8 -> INT32 products A_l^T B_l of the workspace's planes (TN, K-major operands) through
// cuBLASLt. Its default heuristic is not the fastest everywhere (on an H100 at 16384^3 cublasGemmEx ran 780 TOPS
// per product and the strided-batched call 1078, where the third of cuBLASLt's candidates ran 1389), so per
// shape (device, N, Kp, ldp, count) the launch times, once, on its own operands, up to eight algorithms of the
// heuristic in each of two forms, one strided-batched call over the planes and one call per plane, and
// keeps the fastest (the notes say which). Under stream capture nothing can be timed: the launch takes what
// an earlier launch of the shape chose, else the heuristic's first batched algorithm.
//
// `count` products of the workspace's planes (a8, b8: the residues, K-major, w.Kp deep; prod w.ldp apart) into
// prod, on `stream` (a shape's first launch times its choice on the context's stream);
// ctx.notes()[note] says how they were issued. Each product has w.ldp rows (M rounded up to 4), so each plane of
// a8 holds w.ldp rows, those past M zero (zero_padding_rows, ozaki.cu), and prod's rows past M are not C's.
void int8_products(ExecContext& ctx, cudaStream_t stream, int N, const Workspace& w, const signed char* a8,
                   const signed char* b8, int* prod, int count, const char* note);
// The timing int8_products does on a shape's first launch, done now (on the context's stream, reading a8 and b8
// and writing prod as that call would): for a caller that is about to put other work beside the products.
void prepare_int8_products(ExecContext& ctx, int N, const Workspace& w, const signed char* a8, const signed char* b8,
                           int* prod, int count);

// The products by a kernel of our own (int8_wgmma.cu; sm_90a code, compute capability 9.0), each reduced modulo
// its modulus before it is stored: for every l < count, (A_l^T B_l) mod m_l as bytes in [0, m_l), element (i, j)
// of plane l at out + l (w.p_stride / 4) + j w.ldp + i (where int8_products puts the INT32 product, counted in
// elements), on `stream`. The recombination then reads one byte per modulus and element instead of four.
// residue_products_refusal(): empty where the kernel runs on the current device, else why not.
std::string residue_products_refusal();
void residue_products(cudaStream_t stream, int N, const Workspace& w, const signed char* a8, const signed char* b8,
                      unsigned char* out, int count);

}  // namespace ks::gemm::ozaki
