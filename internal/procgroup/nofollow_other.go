//go:build !unix

package procgroup

// noFollow is unix's; O_EXCL refuses an existing link everywhere.
const noFollow = 0
