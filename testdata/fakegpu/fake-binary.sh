#!/bin/sh
# Writes a fake binary at $1 for the fake cuobjdump: cubins for the archs $FAKE_ELF, resource
# usage $FAKE_RES and SASS $FAKE_BIN_SASS; with $FAKE_BIN_CUBINS=DIR, the cubins cuobjdump
# -xelf writes are DIR's (see cuobjdump). The default is the PyTorch extension that
# torch.utils.cpp_extension.load() built on the H200 (kernels/torch, sm_90a): cuobjdump's
# output of it in testdata/forms-h200/torch-load-*.
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
mkdir -p "$(dirname "$1")"
{
  echo "kernel-gate fake binary"
  echo "elf ${FAKE_ELF-sm_90a}"
  echo "res ${FAKE_RES:-$repo/testdata/forms-h200/torch-load-resource-usage.txt}"
  echo "sass ${FAKE_BIN_SASS:-$repo/testdata/forms-h200/torch-load-sass.txt.gz}"
  [ -z "$FAKE_BIN_CUBINS" ] || echo "cubins $FAKE_BIN_CUBINS"
} >"$1"
