__device__ float scale_rdc(float x) { return 3.0f * x; }
