#!/usr/bin/env bash
set -x
set -eo pipefail

linodeId=$(linode-cli linodes list --label gpu-runner-2 --json | jq -r '.[0].id')

linode-cli linodes delete "$linodeId"
