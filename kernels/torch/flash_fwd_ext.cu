// kernels/flash_fwd.cu's kernel and launcher for the PyTorch extension, with no PyTorch
// header (the binding is flash_fwd_bind.cpp; why they are two files is said there). The
// kernel is #included, not copied, so a planted defect prepended to kernels/flash_fwd.cu
// (#define KG_DEFECT_...) reaches both the load() and setup.py builds. kernels/ must be on
// the include path.
#include "flash_fwd_ext.h"

#include "flash_fwd.cu"

static_assert(kg::torch_ext::kHeadDim == kg::kHeadDim, "flash_fwd_ext.h's head dim is flash_fwd.cu's");

namespace kg::torch_ext {

cudaError_t launch_flash_fwd(const half* q, const half* k, const half* v, half* o, int batch_heads,
                             int seqlen, bool causal, cudaStream_t stream) {
  return kg::launch_flash_fwd(q, k, v, o, batch_heads, seqlen, causal, stream);
}

}  // namespace kg::torch_ext
