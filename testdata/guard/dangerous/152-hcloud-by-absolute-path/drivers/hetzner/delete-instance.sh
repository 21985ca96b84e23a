#!/bin/sh

if [ "$2" = "" ]; then
	echo "usage: $0 <account> <instance-name>"
	exit 1
fi

account=$1
name=$2

. ~/.clouds/hetzner/$account.sh
/opt/clouds/drivers/hetzner/support/hcloud server delete $name
