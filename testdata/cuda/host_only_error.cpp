// A host-only source that does not compile (captured by testdata/cuda11.8-host-only/capture.sh):
// nvcc hands a .cpp to the host compiler alone, whose error is all its log says.
#include <cuda_runtime.h>

int main() { return cudaSuccess + undefined_thing; }
