#!/bin/bash

servers=$(hcloud server list -o noheader -o columns=name)

for server in $servers; do
  echo "deleting $server"
  hcloud server delete $server
done
