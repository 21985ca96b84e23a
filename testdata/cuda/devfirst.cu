// A __noinline__ device function defined before the kernels: ptxas prints its "Function
// properties" record before the run's first "Compiling entry function" line (issue 21).
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__global__ void uses_fib(int* out, int n) { out[threadIdx.x] = fib(n + threadIdx.x); }

__global__ void plain(float* x) { x[threadIdx.x] *= 2.0f; }
