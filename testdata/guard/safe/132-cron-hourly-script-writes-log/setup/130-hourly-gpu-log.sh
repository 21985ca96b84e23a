#!/bin/bash

echo '#! /bin/bash

nvidia-smi --query-gpu=index,temperature.gpu,power.draw --format=csv >> /var/log/gpu-hourly.csv
' > /etc/cron.hourly/gpuLog

chmod 755 /etc/cron.hourly/gpuLog
