#!/bin/bash

source cli

if [ "$(hcloud volume list | grep "${VOLUME_NAME}")" ]; then
  hcloud volume detach "$VOLUME_NAME"
fi
if [ "$(hcloud server list | grep ${SERVER_NAME})" ]; then
  echo "deleting ${SERVER_NAME}"
  hcloud server delete "$SERVER_NAME"
fi
