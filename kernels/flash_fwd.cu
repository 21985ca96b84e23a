// FlashAttention-2-style forward pass: fp16 Q/K/V in, fp32 accumulate, fp16 O out.
// Tensor Cores through WMMA (sm_80 and newer). Head dimension 64, optional causal mask.
//
// Layout: q, k, v, o are [batch*heads][seqlen][64], row-major.
// Each block owns kBlockM query rows; each warp owns 16 of them and walks the
// key/value sequence in tiles of kBlockN with the online-softmax recurrence:
//   m' = max(m, rowmax(S)),  P = exp(S - m'),  l' = l*exp(m - m') + rowsum(P),
//   O' = O*exp(m - m') + P V,  and finally O / l.

#include <cuda_fp16.h>
#include <mma.h>
#include "flash_fwd.h"
// Planted defects, one per gate, each built from these sources by a define (never in a
// normal build): KG_DEFECT_RACE (shared memory read without a barrier), KG_DEFECT_OOB (a write
// past the end of O), KG_DEFECT_UNINIT (a read of O before anything wrote it),
// KG_DEFECT_DIVERGENT_BARRIER (__syncthreads in a divergent branch), KG_DEFECT_WRONG (the
// softmax scale forgotten), KG_DEFECT_HANG (a kernel that never ends). Each leaves the output
// of a correct run unchanged except KG_DEFECT_WRONG, so exactly one gate should fail.
// KG_DEFECT_SLOW5 makes every warp wait KG_SLOW_CYCLES clock cycles per key/value tile
// (a clock64 spin, which the compiler cannot remove): a slower kernel with the same result.
// An FMA chain per tile measured no slowdown at all on an H200 (it hides behind the tile's
// memory and MMA latency), so the delay is made of time, not of work.

#ifndef KG_SLOW_CYCLES
#define KG_SLOW_CYCLES 400  // see KG_DEFECT_SLOW5
#endif

#ifndef KG_FLASH_MIN_BLOCKS
// Blocks per SM promised to ptxas through __launch_bounds__. Raising it forces
// ptxas to cap registers per thread (65536 / (128 * blocks)); the "spill"
// defect builds with a value that makes the kernel spill.
#define KG_FLASH_MIN_BLOCKS 1
#endif

namespace kg {

constexpr int kHeadDim = 64;

template <int kBlockM, int kBlockN, bool kCausal>
__global__ void __launch_bounds__(kBlockM / 16 * 32, KG_FLASH_MIN_BLOCKS)
flash_fwd(const half* __restrict__ q, const half* __restrict__ k,
          const half* __restrict__ v, half* __restrict__ o, int seqlen,
          float softmax_scale) {
  using namespace nvcuda;
  constexpr int D = kHeadDim;
  constexpr int kThreads = kBlockM / 16 * 32;
  constexpr int kLdh = D + 8;        // half row pitch: multiple of 8, breaks bank conflicts
  constexpr int kLdf = kBlockN + 4;  // float row pitch: multiple of 4
  static_assert(kBlockN == D, "the S scratch tile doubles as the O staging tile");

  // sQ holds Q while its fragments are loaded, then each warp's rows of P.
  __shared__ __align__(128) half sQP[kBlockM][kLdh];
  __shared__ __align__(128) half sK[kBlockN][kLdh];
  __shared__ __align__(128) half sV[kBlockN][kLdh];
  __shared__ __align__(128) float sS[kBlockM][kLdf];

#ifdef KG_DEFECT_WRONG
  softmax_scale = 1.0f;  // forgot 1/sqrt(head_dim)
#endif
#ifdef KG_DEFECT_HANG
  // Two volatile loads of the same word never differ, so the loop never ends; the loads keep
  // the compiler from removing it.
  while (reinterpret_cast<const volatile unsigned short*>(q)[0] == reinterpret_cast<const volatile unsigned short*>(q)[0]) {
  }
#endif
  const int bh = blockIdx.y;
  const int m0 = blockIdx.x * kBlockM;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const size_t base = (size_t)bh * seqlen * D;

  // Load the Q tile (zero rows past the end of the sequence).
  for (int i = threadIdx.x; i < kBlockM * D / 8; i += kThreads) {
    int r = i / (D / 8), c = (i % (D / 8)) * 8;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (m0 + r < seqlen) val = *reinterpret_cast<const uint4*>(q + base + (size_t)(m0 + r) * D + c);
    *reinterpret_cast<uint4*>(&sQP[r][c]) = val;
  }
  __syncthreads();

  const int wr = warp * 16;  // this warp's first row inside the block
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> qf[D / 16];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) wmma::load_matrix_sync(qf[kk], &sQP[wr][kk * 16], kLdh);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> of[D / 16];
#pragma unroll
  for (int n = 0; n < D / 16; ++n) wmma::fill_fragment(of[n], 0.0f);

  // Two lanes per row: lane/2 is the row, lane%2 picks the half of the columns.
  const int r = lane / 2;
  const int c0 = (lane % 2) * (kBlockN / 2);
  const int qrow = m0 + wr + r;
  float row_m = -INFINITY, row_l = 0.0f;

  const int n_end = kCausal ? min(seqlen, m0 + kBlockM) : seqlen;
  for (int n0 = 0; n0 < n_end; n0 += kBlockN) {
    __syncthreads();  // everyone is done with the previous K/V tile
    for (int i = threadIdx.x; i < kBlockN * D / 8; i += kThreads) {
      int rr = i / (D / 8), c = (i % (D / 8)) * 8;
      uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
      if (n0 + rr < seqlen) {
        kv = *reinterpret_cast<const uint4*>(k + base + (size_t)(n0 + rr) * D + c);
        vv = *reinterpret_cast<const uint4*>(v + base + (size_t)(n0 + rr) * D + c);
      }
      *reinterpret_cast<uint4*>(&sK[rr][c]) = kv;
      *reinterpret_cast<uint4*>(&sV[rr][c]) = vv;
    }
    __syncthreads();

    // S = Q K^T for this warp's 16 rows.
#pragma unroll
    for (int n = 0; n < kBlockN / 16; ++n) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
      wmma::fill_fragment(sf, 0.0f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> kf;
        wmma::load_matrix_sync(kf, &sK[n * 16][kk * 16], kLdh);
        wmma::mma_sync(sf, qf[kk], kf, sf);
      }
      wmma::store_matrix_sync(&sS[wr][n * 16], sf, kLdf, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax on this lane's half row; P goes to sQP as fp16.
    float s[kBlockN / 2];
    float tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < kBlockN / 2; ++c) {
      int col = n0 + c0 + c;
      float x = sS[wr + r][c0 + c] * softmax_scale;
      bool masked = col >= seqlen || (kCausal && col > qrow);
      s[c] = masked ? -INFINITY : x;
      tile_max = fmaxf(tile_max, s[c]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float m_new = fmaxf(row_m, tile_max);
    const float alpha = (row_m == -INFINITY) ? 0.0f : __expf(row_m - m_new);
    float tile_sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kBlockN / 2; ++c) {
      float p = (s[c] == -INFINITY) ? 0.0f : __expf(s[c] - m_new);
      tile_sum += p;
      sQP[wr + r][c0 + c] = __float2half(p);
    }
    tile_sum += __shfl_xor_sync(0xffffffffu, tile_sum, 1);
    row_l = row_l * alpha + tile_sum;
    row_m = m_new;

    // Rescale O by alpha: fragments have no public row mapping, so stage them through sS.
    // Every lane must have read its S values before the warp overwrites sS with O
    // (compute-sanitizer racecheck flags the hazard without this barrier).
    __syncwarp();
#pragma unroll
    for (int n = 0; n < D / 16; ++n)
      wmma::store_matrix_sync(&sS[wr][n * 16], of[n], kLdf, wmma::mem_row_major);
    __syncwarp();
#pragma unroll
    for (int c = 0; c < D / 2; ++c) sS[wr + r][c0 + c] *= alpha;
    __syncwarp();
#pragma unroll
    for (int n = 0; n < D / 16; ++n)
      wmma::load_matrix_sync(of[n], &sS[wr][n * 16], kLdf, wmma::mem_row_major);

    // O += P V.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> pf;
      wmma::load_matrix_sync(pf, &sQP[wr][kk * 16], kLdh);
#pragma unroll
      for (int n = 0; n < D / 16; ++n) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> vf;
        wmma::load_matrix_sync(vf, &sV[kk * 16][n * 16], kLdh);
        wmma::mma_sync(of[n], pf, vf, of[n]);
      }
    }
#ifdef KG_DEFECT_SLOW5
    for (const long long t0 = clock64(); clock64() - t0 < KG_SLOW_CYCLES;) {
    }
#endif
    __syncwarp();
  }

#ifdef KG_DEFECT_RACE
  // Each warp publishes its rows' sums and reads another warp's without a barrier: a
  // read-after-write hazard across warps. The value read never changes the output.
  __shared__ float sRace[kBlockM];
  sRace[wr + r] = row_l;
  if (sRace[(wr + r + 16) % kBlockM] == -1.0f) row_l += 1e-30f;
#endif
#ifdef KG_DEFECT_UNINIT
  // Reads O before this kernel wrote it (the harness never initialises O). The comparison
  // keeps the read alive and is never true for a value ever written.
  // Only the first row of each head reads, to keep the report short.
  if (qrow == 0 && __half2float(o[base + c0]) == -12345.0f) row_l += 1e-30f;
#endif

  // O / l, written as fp16.
#pragma unroll
  for (int n = 0; n < D / 16; ++n)
    wmma::store_matrix_sync(&sS[wr][n * 16], of[n], kLdf, wmma::mem_row_major);
  __syncwarp();
  if (qrow < seqlen) {
    const float inv_l = row_l > 0.0f ? 1.0f / row_l : 0.0f;
#pragma unroll
    for (int c = 0; c < D / 2; ++c)
      o[base + (size_t)qrow * D + c0 + c] = __float2half(sS[wr + r][c0 + c] * inv_l);
#ifdef KG_DEFECT_OOB
    // The last row of the last head also writes one row past the end of O.
    if (bh == gridDim.y - 1 && qrow == seqlen - 1)
      for (int c = 0; c < D / 2; ++c) o[base + (size_t)seqlen * D + c0 + c] = __float2half(0.0f);
#endif
  }
#ifdef KG_DEFECT_DIVERGENT_BARRIER
  // Only half of each warp reaches the barrier. It comes after every warp-synchronous step
  // (a __syncwarp after it would deadlock) and before a shared-memory store, which keeps the
  // compiler from dropping it as the kernel's last instruction.
  // Only block (0, 0), to keep the report short.
  if (blockIdx.x == 0 && blockIdx.y == 0 && lane < 16) __syncthreads();
  sS[wr + r][c0] = row_l;
#endif
}

// Host launcher: grid (ceil(seqlen/64), batch*heads), 128 threads.
cudaError_t launch_flash_fwd(const half* q, const half* k, const half* v, half* o,
                                    int batch_heads, int seqlen, bool causal,
                                    cudaStream_t stream) {
  constexpr int kBlockM = 64, kBlockN = 64;
  dim3 grid((seqlen + kBlockM - 1) / kBlockM, batch_heads);
  dim3 block(kBlockM / 16 * 32);
  const float scale = 0.125f;  // 1/sqrt(64)
  if (causal)
    flash_fwd<kBlockM, kBlockN, true><<<grid, block, 0, stream>>>(q, k, v, o, seqlen, scale);
  else
    flash_fwd<kBlockM, kBlockN, false><<<grid, block, 0, stream>>>(q, k, v, o, seqlen, scale);
  return cudaGetLastError();
}

}  // namespace kg
