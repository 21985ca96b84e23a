//go:build !unix

package main

// ownCPUSeconds is not measured on this platform.
func ownCPUSeconds() float64 { return 0 }
