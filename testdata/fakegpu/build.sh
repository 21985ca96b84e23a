#!/bin/sh
# A fake build command (setup.py build_ext, make, cmake --build), run from a tree's root: when
# NVCC_APPEND_FLAGS asks for -Xptxas=-v it prints the nvcc -Xptxas -v output recorded on the
# H200 (testdata/replay-old/clean-cuobjdump/head/attention/build.log), as a build whose nvcc reads the
# variable does; then it writes build/lib/kg_ext.so (fake-binary.sh). A tree holding
# kernels/BROKEN fails the way a compile error does. Every run appends what it saw to
# $FAKE_ENV_LOG, when set.
# FAKE_ENV_DUMP=DIR: write the environment this process was started with to DIR (the
# token tests: no child of kernel-gate may hold one).
if [ -n "$FAKE_ENV_DUMP" ]; then { tr '\0' '\n' </proc/$$/environ || env; } >"$FAKE_ENV_DUMP/build.$$" 2>/dev/null; fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ -n "$FAKE_ENV_LOG" ] && echo "build cache=$KG_CACHE_DIR torch=$TORCH_EXTENSIONS_DIR append=$NVCC_APPEND_FLAGS" >>"$FAKE_ENV_LOG"
echo "running build_ext"
if [ -e kernels/BROKEN ]; then
  echo "kernels/flash_fwd.cu(42): error: identifier \"oops\" is undefined" >&2
  echo "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1" >&2
  exit 1
fi
case " $NVCC_APPEND_FLAGS " in
*" -Xptxas=-v "*) cat "$repo/testdata/replay-old/clean-cuobjdump/head/attention/build.log" >&2 ;;
esac
sh "$here/fake-binary.sh" build/lib/kg_ext.so
