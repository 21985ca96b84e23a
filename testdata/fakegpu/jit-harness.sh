#!/bin/sh
# A fake harness command of a target built on first use (torch.utils.cpp_extension.load,
# Triton): the first run in check mode "compiles" the extension into
# $TORCH_EXTENSIONS_DIR/py312_cu130/kg_ext/kg_ext.so (fake-binary.sh; nothing is printed, as
# load(verbose=False) prints nothing), then every mode does what harness.sh does. Every run
# appends what it saw to $FAKE_ENV_LOG, when set.
# FAKE_ENV_DUMP=DIR: write the environment this process was started with to DIR (the
# token tests: no child of kernel-gate may hold one).
if [ -n "$FAKE_ENV_DUMP" ]; then { tr '\0' '\n' </proc/$$/environ || env; } >"$FAKE_ENV_DUMP/jit-harness.$$" 2>/dev/null; fi
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$FAKE_ENV_LOG" ] && echo "$KG_MODE cache=$KG_CACHE_DIR torch=$TORCH_EXTENSIONS_DIR append=$NVCC_APPEND_FLAGS nocaching=$PYTORCH_NO_CUDA_MEMORY_CACHING pwd=$(pwd)" >>"$FAKE_ENV_LOG"
ext=$TORCH_EXTENSIONS_DIR/py312_cu130/kg_ext/kg_ext.so
[ -e "$ext" ] || sh "$here/fake-binary.sh" "$ext"
exec sh "$here/harness.sh" "$@"
