import boto3
ec2 = boto3.resource('ec2')

instances = ec2.create_instances(
    ImageId='ami-0123456789abcdef0',
    MinCount=1,
    MaxCount=1,
    InstanceType='g5.xlarge',
)

ec2.Instance('i-0fedcba9876543210').stop()
