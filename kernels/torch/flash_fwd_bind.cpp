// kernels/flash_fwd.cu's kernel bound as a PyTorch operator, the way a kernel team ships it:
// built by torch.utils.cpp_extension.load() (kernels/torch/kg_harness.py, KG_TORCH_FORM=load)
// or by setup.py's CUDAExtension (kernels/torch/setup.py, KG_TORCH_FORM=setup). This file is
// the binding: PyTorch's headers, checks and pybind11, compiled by the host compiler. The
// kernel and its launcher are in flash_fwd_ext.cu, which includes no PyTorch header: nvcc
// compiling <torch/extension.h> took 74-83 s of a cold load() on an H100 where the two files,
// built side by side by ninja, take 31-32 s (docs/overhead.md).
//
//   forward(q, k, v, causal)        -> o      q, k, v: fp16 CUDA [batch, heads, seqlen, 64]
//   forward_out(q, k, v, o, causal)           writes into o (same shape), allocates nothing
#include <torch/extension.h>

#include <climits>

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "flash_fwd_ext.h"

namespace {

void check_input(const torch::Tensor& t, const char* name, const torch::Tensor& q) {
  TORCH_CHECK(t.is_cuda(), "flash_fwd: ", name, " must be a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == torch::kHalf, "flash_fwd: ", name, " must be float16, got ", t.scalar_type());
  TORCH_CHECK(t.dim() == 4 && t.size(3) == kg::torch_ext::kHeadDim, "flash_fwd: ", name,
              " must be [batch, heads, seqlen, 64], got ", t.sizes());
  TORCH_CHECK(t.is_contiguous(), "flash_fwd: ", name, " must be contiguous");
  TORCH_CHECK(t.sizes() == q.sizes(), "flash_fwd: ", name, " has shape ", t.sizes(), ", q has ", q.sizes());
  TORCH_CHECK(t.device() == q.device(), "flash_fwd: ", name, " is on ", t.device(), ", q on ", q.device());
}

const half* as_half(const torch::Tensor& t) { return reinterpret_cast<const half*>(t.data_ptr<at::Half>()); }

void forward_out(torch::Tensor q, torch::Tensor k, torch::Tensor v, torch::Tensor o, bool causal) {
  check_input(q, "q", q);
  check_input(k, "k", q);
  check_input(v, "v", q);
  check_input(o, "o", q);
  TORCH_CHECK(q.size(0) * q.size(1) <= 65535, "flash_fwd: batch*heads must be at most 65535 (grid.y)");
  TORCH_CHECK(q.size(2) <= INT_MAX, "flash_fwd: seqlen too large");
  if (q.numel() == 0) return;
  const c10::cuda::CUDAGuard guard(q.device());
  const cudaError_t err = kg::torch_ext::launch_flash_fwd(as_half(q), as_half(k), as_half(v),
                                               reinterpret_cast<half*>(o.data_ptr<at::Half>()),
                                               static_cast<int>(q.size(0) * q.size(1)),
                                               static_cast<int>(q.size(2)), causal,
                                               at::cuda::getCurrentCUDAStream());
  TORCH_CHECK(err == cudaSuccess, "flash_fwd: launch failed: ", cudaGetErrorString(err));
}

torch::Tensor forward(torch::Tensor q, torch::Tensor k, torch::Tensor v, bool causal) {
  torch::Tensor o = torch::empty_like(q);
  forward_out(q, k, v, o, causal);
  return o;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "kernels/flash_fwd.cu's flash_fwd (fp16, head dim 64) as a PyTorch operator";
  m.def("forward", &forward, "o = attention(q, k, v), q/k/v fp16 [batch, heads, seqlen, 64]",
        py::arg("q"), py::arg("k"), py::arg("v"), py::arg("causal") = false);
  m.def("forward_out", &forward_out, "attention(q, k, v) written into o",
        py::arg("q"), py::arg("k"), py::arg("v"), py::arg("o"), py::arg("causal") = false);
}
