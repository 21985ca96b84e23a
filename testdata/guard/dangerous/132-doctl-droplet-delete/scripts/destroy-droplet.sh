#!/bin/bash

DROPLET_NAME="gpu-bench"

DROPLET_ID=$(doctl compute droplet list --format "ID,Name" | grep "$DROPLET_NAME" | awk '{print $1}')

if [ -z "$DROPLET_ID" ]; then
    echo "no droplet $DROPLET_NAME"
    exit 1
fi

doctl compute droplet delete "$DROPLET_ID" --force
