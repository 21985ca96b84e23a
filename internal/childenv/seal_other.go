//go:build !linux

package childenv

// Seal is Linux's only (see seal_linux.go): elsewhere the credentials stay in the
// environment the process was started with, and TakeSecrets takes them out of what its
// children inherit.
func Seal() (map[string]string, error) { return nil, nil }
