// The host launcher of softmax.cu, which is a translation unit of its own (kernel-gate.yml
// compiles each kernel file apart, in parallel): what harness_cases.cpp calls.
#pragma once
#include <cuda_runtime.h>

namespace kg {

// y[r][:] = softmax(x[r][:]), fp32, rows × cols row-major: one block of 256 threads a row.
cudaError_t launch_row_softmax(const float* x, float* y, int rows, int cols, cudaStream_t stream = 0);

}  // namespace kg
