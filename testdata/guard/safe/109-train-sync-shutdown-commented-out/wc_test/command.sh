#!/bin/sh

python train.py --prefetch=2 --ds=db
if [ $? -eq 0 ]; then
    sleep 15
    sync
    #echo 'shutting down vm...'
    #sudo shutdown -h now
else
    echo FAIL
fi
