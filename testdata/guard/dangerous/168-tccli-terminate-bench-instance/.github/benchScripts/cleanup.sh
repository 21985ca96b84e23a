#!/bin/bash
echo "Cleaning up..."
BENCH_INSTANCE=$(cat ~/bench_instance)
echo "Bench instance: $BENCH_INSTANCE"
tccli cvm TerminateInstances --InstanceIds "[\"$BENCH_INSTANCE\"]" --ReleasePrepaidDataDisk True
echo "cleanup done"
exit 0
