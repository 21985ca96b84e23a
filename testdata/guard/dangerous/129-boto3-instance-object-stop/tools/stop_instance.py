import boto3

REGION = "us-west-2"
EC2 = boto3.resource('ec2', region_name=REGION)
INSTANCE_ID = 'i-0a1b2c3d4e5f60718'

instance = EC2.Instance(INSTANCE_ID)

instance.stop()
print(f'stopping {instance.id}')
instance.wait_until_stopped()
