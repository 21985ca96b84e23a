//go:build !unix

package basecache

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs") }
