//go:build !unix

package input

// nonBlock is unix's; elsewhere a named input is checked by Stat before it is opened.
const nonBlock = 0
