#!/bin/bash

set -euxo pipefail

NAME="gpu-box"

instance_id=$(scw instance server list | grep "$NAME" | awk '{print $1}')

if [ -n "$instance_id" ]; then
  echo "terminating $instance_id"
  scw instance server terminate "$instance_id"
else
  echo "no $NAME instance"
  exit 1
fi

# scw instance ip delete "$ip_id"
