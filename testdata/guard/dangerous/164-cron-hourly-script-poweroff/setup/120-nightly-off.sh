#!/bin/bash

echo '#! /bin/bash

HOUR=$(date +%H)
if [ $HOUR -eq "23" ];
then
	systemctl poweroff
fi
' > /etc/cron.hourly/nightlyOff

chmod 755 /etc/cron.hourly/nightlyOff
