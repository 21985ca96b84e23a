//go:build unix

package procgroup

import "syscall"

// noFollow refuses a symbolic link as the file opened.
const noFollow = syscall.O_NOFOLLOW
