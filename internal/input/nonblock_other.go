//go:build !unix

package input

// NonBlock is unix's O_NONBLOCK; elsewhere a path is checked by Stat before it is opened.
const NonBlock = 0
