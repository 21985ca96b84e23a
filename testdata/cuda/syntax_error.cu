// Capture source: a front-end error, so nvcc never reaches ptxas.
__global__ void broken(float* out) { out[threadIdx.x] = undefined_thing; }
