#!/bin/sh
echo 'destroying instances'
VULTR_KEY=`cat config`

IDS=`curl -s "https://api.vultr.com/v2/instances" \
  -H "Authorization: Bearer ${VULTR_KEY}" | jq -r '.instances[].id'`

for ID in ${IDS}
do
  curl "https://api.vultr.com/v2/instances/${ID}" \
    -X DELETE \
    -H "Authorization: Bearer ${VULTR_KEY}"
done
