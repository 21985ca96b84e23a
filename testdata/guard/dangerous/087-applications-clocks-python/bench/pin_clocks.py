"""Pin application clocks before timing kernels (H100 SXM: mem 2619 MHz, sm 1980 MHz)."""
import subprocess

MEM, SM = 2619, 1980


def main() -> None:
    subprocess.check_call(["nvidia-smi", "-q", "-d", "SUPPORTED_CLOCKS"])
    subprocess.check_call(["sudo", "nvidia-smi", "-ac", "2619,1980"])
    print(f"application clocks pinned to {MEM},{SM}")


if __name__ == "__main__":
    main()
