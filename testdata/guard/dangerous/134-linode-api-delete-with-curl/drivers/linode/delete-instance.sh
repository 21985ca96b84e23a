#!/bin/sh

if [ "$2" = "" ]; then
	echo "usage: $0 <account> <instance-id>"
	exit 1
fi

account=$1
instance=$2
. ~/.clouds/linode/$account.sh

curl -sS -X DELETE \
	-H "Authorization: Bearer $LINODE_TOKEN" \
	https://api.linode.com/v4/linode/instances/$instance | python3 -m json.tool
