#!/usr/bin/env bash
set -euo pipefail
vastai show instances
vastai start instance "${VAST_INSTANCE_ID:?}"
vastai destroy instance --help
