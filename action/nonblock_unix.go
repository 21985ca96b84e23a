//go:build unix

package main

import "syscall"

// nonBlock opens --out without waiting for a FIFO's reader.
const nonBlock = syscall.O_NONBLOCK
