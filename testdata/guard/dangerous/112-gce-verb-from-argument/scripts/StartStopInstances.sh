#!/bin/bash
# Start or stop the GPU instances

if [[ $# -ne 1 ]]; then
  printf "Need one argument\n"
  exit
fi

gcloud compute instances list

for i in `gcloud compute instances list | awk '{print $1}' | tail -4`
do
  gcloud compute instances $1 $i
done

gcloud compute instances list
