// One kernel whose single instruction of fp64 math (DFMA) the sass gate's forbid must find.
__global__ void dk(double *a, double b, double c) { a[threadIdx.x] = fma(a[threadIdx.x], b, c); }
