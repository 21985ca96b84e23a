// Built with -rdc=true: helper is a function of its own, which kern calls.
__device__ __noinline__ float helper(float x) { return x * 3.0f; }
__global__ void kern(float *a) { a[threadIdx.x] = helper(a[threadIdx.x]); }
int main() { return 0; }
