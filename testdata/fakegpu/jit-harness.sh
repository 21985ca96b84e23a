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
[ -n "$FAKE_ENV_LOG" ] && echo "$KG_MODE cache=$KG_CACHE_DIR torch=$TORCH_EXTENSIONS_DIR append=$NVCC_APPEND_FLAGS nocaching=$PYTORCH_NO_CUDA_MEMORY_CACHING pwd=$(pwd) jobs=$MAX_JOBS" >>"$FAKE_ENV_LOG"
ext=$TORCH_EXTENSIONS_DIR/py312_cu130/kg_ext/kg_ext.so
# FAKE_RENDEZVOUS=DIR: a first run (the one that builds) waits, up to 10 s, until two first
# runs have arrived in DIR, and says in $FAKE_ENV_LOG whether they met ("met" or "alone"):
# base's and head's first runs ran at once, or one after the other.
if [ -n "$FAKE_RENDEZVOUS" ] && [ ! -e "$ext" ]; then
  : >"$FAKE_RENDEZVOUS/$$"
  i=0
  while [ "$(ls "$FAKE_RENDEZVOUS" | wc -l)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  if [ $i -lt 100 ]; then echo "first run met" >>"$FAKE_ENV_LOG"; else echo "first run alone" >>"$FAKE_ENV_LOG"; fi
fi
[ -e "$ext" ] || sh "$here/fake-binary.sh" "$ext"
exec sh "$here/harness.sh" "$@"
