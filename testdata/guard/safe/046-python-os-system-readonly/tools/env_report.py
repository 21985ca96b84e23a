import os

os.system("nvidia-smi -L")
os.system("nvcc --version")
os.system("uname -a")
