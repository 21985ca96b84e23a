#!/bin/bash

echo "starting"
sleep 10

if [ -n "${RUNPOD_POD_ID}" ]; then
    echo "pod: $RUNPOD_POD_ID"
    /usr/local/bin/runpodctl remove pod $RUNPOD_POD_ID
else
  echo "not on a pod"
fi
