instance="$1"

name=$(echo "${instance}" | cut -d "|" -f 1)
state=$(echo "${instance}" | cut -d "|" -f 2)
id=$(echo "${instance}" | cut -d "|" -f 4)

if [ "$state" != "running" ]
then
    echo "starting ec2 instance $name"
    aws ec2 start-instances --instance-ids $id
else
    echo "ec2 instance $name is already running"
fi
