// Package configpos holds what every gate's section of kernel-gate.yml has in common: where
// each of its settings sits, so that every message can name "kernel-gate.yml:12", what the
// section resolved to when it was loaded, so that the gate does not compile it again, and the
// key or rule ID a typo meant.
package configpos

import (
	"cmp"
	"slices"
	"strconv"
)

// DefaultFile names the config in messages when the gate was not told its file.
const DefaultFile = "kernel-gate.yml"

// Where is "file:line", or the file alone when the line is unknown (0).
func Where(file string, line int) string {
	f := cmp.Or(file, DefaultFile)
	if line > 0 {
		return f + ":" + strconv.Itoa(line)
	}
	return f
}

// Closest returns the candidate nearest to word by edit distance, if one is within 3 edits
// (ties go to the alphabetically first).
func Closest(word string, candidates []string) (string, bool) {
	sorted := slices.Sorted(slices.Values(candidates))
	best, bestD := "", 4
	for _, c := range sorted {
		if d := distance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// distance is the Levenshtein edit distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
