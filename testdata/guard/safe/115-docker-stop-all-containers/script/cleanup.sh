eval $(docker-machine env)
echo stop all containers
docker stop $(docker ps -a -q)
echo remove untagged images
docker rmi -f $(docker images | grep "<none>" | awk "{print \$3}")
