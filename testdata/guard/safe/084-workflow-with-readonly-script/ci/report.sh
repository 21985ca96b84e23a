#!/usr/bin/env bash
# Job summary: GPU performance state.
set -u
echo "## GPU status" >> "$GITHUB_STEP_SUMMARY"
nvidia-smi -q -d PERFORMANCE | sed -n '1,20p' >> "$GITHUB_STEP_SUMMARY"
