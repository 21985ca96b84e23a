#!/bin/bash
passfile=~/.bmc-pass

if [ $# -ne 1 ] ; then
	echo "usage: $0 status|on|soft|off|cycle"
	exit 1
fi

for i in {0..7}
do
 echo "gpu-0-$i"
 ipmitool -I lanplus -H bmc-gpu-0-$i.mgmt -f $passfile -U admin chassis power $1
done

for i in {0..3}
do
 echo "gpu-1-$i"
 ipmitool -I lanplus -H bmc-gpu-1-$i.mgmt -f $passfile -U admin chassis power $1
done
