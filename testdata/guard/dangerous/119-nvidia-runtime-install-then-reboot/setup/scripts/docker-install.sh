# docker
sudo apt install -y docker-ce
sudo gpasswd -a $(whoami) docker
sudo service docker restart

# nvidia runtime
curl -s -L https://nvidia.github.io/nvidia-container-runtime/gpgkey | \
  sudo apt-key add -
 distribution=$(. /etc/os-release;echo $ID$VERSION_ID)
 sudo apt update
 sudo apt install -y nvidia-container-runtime
 sudo cp ../data/daemon.json /etc/docker/daemon.json
 sudo reboot
