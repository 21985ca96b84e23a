// Capture source: separate compilation (-rdc) so nvlink reports resource usage after linking.
__device__ float scale_rdc(float x);
__global__ void rdc_kernel(float* out) { out[threadIdx.x] = scale_rdc(out[threadIdx.x]); }
int main() { return 0; }
