//go:build !unix

package pipeline

// ownCPUSeconds is not measured on this platform.
func ownCPUSeconds() float64 { return 0 }
