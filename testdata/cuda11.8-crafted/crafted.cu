// Two kernels: one without fp64 math, one whose single instruction of it (DFMA) the sass
// gate's forbid must find.
__global__ void scale(float *a) { a[threadIdx.x] *= 2.0f; }
__global__ void dk(double *a, double b, double c) { a[threadIdx.x] = fma(a[threadIdx.x], b, c); }
