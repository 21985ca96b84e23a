//go:build !unix

package main

// nonBlock is unix's.
const nonBlock = 0
