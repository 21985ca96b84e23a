#! /bin/bash

# metadata key (google cloud): shutdown-script

pid=$(ps -e -o pid,command | grep python | grep train | head -n1 | awk '{print $1}')

echo "kill $pid"

kill -SIGINT $pid
