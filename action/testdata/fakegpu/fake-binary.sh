#!/bin/sh
# Writes a fake binary at $1 for the fake cuobjdump: cubins for $FAKE_ELF (default: sm_80
# sm_89 sm_90a, as the recorded flash_multi.o), resource usage $FAKE_RES and SASS $FAKE_SASS
# (default: cuobjdump of that object on the H200, testdata/cuda13-h200/*_flash_multi.txt).
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
mkdir -p "$(dirname "$1")"
{
  echo "kernel-gate fake binary"
  echo "elf ${FAKE_ELF-sm_80 sm_89 sm_90a}"
  echo "res ${FAKE_RES:-$repo/testdata/cuda13-h200/cuobjdump_res_flash_multi.txt}"
  echo "sass ${FAKE_BIN_SASS:-$repo/testdata/cuda13-h200/cuobjdump_sass_flash_multi.txt}"
} >"$1"
