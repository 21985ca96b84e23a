#!/usr/bin/env bash
# Record which power tools exist on the runner image (for the audit report).
for tool in shutdown reboot poweroff halt; do
  if command -v "$tool" >/dev/null 2>&1; then
    echo "$tool: $(command -v "$tool")"
  fi
done
which nvidia-smi
type -t kubectl || true
