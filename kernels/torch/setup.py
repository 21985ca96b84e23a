"""setup.py for kernels/flash_fwd.cu's attention as a PyTorch extension (the `setup` form):

    cd kernels/torch && python3 setup.py build_ext --inplace

builds kg_flash_fwd_setup*.so here, which `KG_TORCH_FORM=setup python3 kg_harness.py`
imports. The same binding (flash_fwd_bind.cpp, flash_fwd_ext.cu) as the load() form; the kernel is #included
from kernels/flash_fwd.cu. Arches: TORCH_CUDA_ARCH_LIST, else PyTorch's default (the visible
GPUs' arch, the newest also as PTX). nvcc's extra flags come from the environment
(NVCC_APPEND_FLAGS, which kernel-gate sets), not from here.
"""

import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))
# As kg_harness.py's load(): PyTorch's -D__CUDA_NO_HALF_*__ undone for a plain-nvcc kernel.
HALF_FLAGS = ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__"]

setup(
    name="kg_flash_fwd_setup",
    version="0.0.0",
    ext_modules=[
        CUDAExtension(
            name="kg_flash_fwd_setup",
            sources=["flash_fwd_bind.cpp", "flash_fwd_ext.cu"],
            include_dirs=[os.path.dirname(HERE)],  # kernels/, for #include "flash_fwd.cu"
            extra_compile_args={"cxx": ["-O3"], "nvcc": ["-O3", *HALF_FLAGS]},
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
