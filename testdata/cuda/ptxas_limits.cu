// Kernels that make ptxas warn about limits, to capture its warning texts (issue 21: an
// error text's numbers must never become a kernel name).
__global__ void __launch_bounds__(1024, 2) many_threads(float* x) {
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) acc[i] = x[threadIdx.x * 64 + i];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += acc[i] * acc[(i * 7) % 64];
  x[threadIdx.x] = s;
}

__global__ void __launch_bounds__(64, 32) few_regs(double* x) {
  double acc[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) acc[i] = x[threadIdx.x * 32 + i];
  double s = 0;
#pragma unroll
  for (int i = 0; i < 32; ++i) s += acc[i] * acc[(i * 5) % 32];
  x[threadIdx.x] = s;
}
