//go:build unix

package input

import "syscall"

// nonBlock opens a FIFO without waiting for a writer (it is then refused, not read).
const nonBlock = syscall.O_NONBLOCK
