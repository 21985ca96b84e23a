# Usage: ./az-vm-power.sh <start/stop/deallocate/restart>
#!/bin/bash
action=$1
az account set --subscription "$SUBSCRIPTION"
list=$(az vm list -g gpu-sanity --query [].id --output tsv | awk -F "/" '{print $NF}')
for vmname in $list
do
    echo ${vmname}
    az vm ${action} --resource-group gpu-sanity --name ${vmname}
done
