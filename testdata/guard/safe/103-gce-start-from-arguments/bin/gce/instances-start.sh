#!/bin/bash
check_usage() {
  if [ $# -lt 2 ]; then
    echo "Usage: $0 <instance> <zone>"
    exit 1
  fi
}
check_usage $*
gcloud compute instances start $1 --zone=$2
