#!/usr/bin/env bash
# Show what a teardown would remove; the real teardown is done by ops.
set -euo pipefail
cd infra/scratch
tofu init -input=false
tofu plan -destroy -no-color | tee teardown-preview.txt
