import boto3
ec2 = boto3.resource('ec2')
running = [{'Name': 'instance-state-name', 'Values': ['running']}]

ec2.instances.filter(Filters=running).stop()
