#!/bin/bash
passfile=~/.bmc-pass

for i in {0..7}
do
 echo "gpu-0-$i"
 ipmitool -I lanplus -H bmc-gpu-0-$i.mgmt -f $passfile -U admin chassis power status
done
