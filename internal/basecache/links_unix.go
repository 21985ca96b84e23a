//go:build unix

package basecache

import (
	"io/fs"
	"syscall"
)

// hardLinks is how many names the file has (1 where the system does not say).
func hardLinks(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Nlink)
	}
	return 1
}
