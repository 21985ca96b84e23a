//go:build unix

package input

import "syscall"

// NonBlock is the open(2) flag that keeps an open from waiting for a FIFO's other end: a
// FIFO opened with it is refused (or, written to, given a deadline) instead of waited on
// for ever. Everything that opens a path it was given, to read or to write, adds it.
const NonBlock = syscall.O_NONBLOCK
