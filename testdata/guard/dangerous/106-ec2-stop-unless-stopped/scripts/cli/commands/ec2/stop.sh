instance="$1"

name=$(echo "${instance}" | cut -d "|" -f 1)
state=$(echo "${instance}" | cut -d "|" -f 2)
id=$(echo "${instance}" | cut -d "|" -f 4)

if [ "$state" != "stopped" ]
then
    echo "stopping ec2 instance $name"
    aws ec2 stop-instances --instance-ids $id
else
    echo "ec2 instance $name is already stopped"
fi
