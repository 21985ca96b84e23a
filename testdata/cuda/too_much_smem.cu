// Capture source: static shared memory over the 48 KiB limit, so ptxas stops with an error.
__global__ void too_much_smem(float* out) {
  __shared__ float big[32768];  // 128 KiB
  big[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = big[(threadIdx.x + 1) % 32768];
}
