// Package shard splits a run's targets across runners: `kernel-gate run --shard i/n` gates
// the targets whose name hashes to shard i of n, and `kernel-gate merge` checks that the
// shards of a run covered every target once.
//
// A target's shard depends on its name and n alone (the first 8 bytes of its SHA-256, mod
// n), never on its position in the config: adding, removing or reordering targets never
// moves another target to another shard, so a runner keeps the targets (and the build
// caches) it had. The price is balance: with few targets a shard may get none or several,
// as a hash falls.
package shard

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Max is the most shards a run may be split into: far more GPU runners than any matrix has,
// and a bound on what merge expects.
const Max = 256

// Spec is one shard of a run: Index of Count, 1-based (as a matrix writes `shard: [1, 2, 3]`).
// The zero Spec is an unsharded run.
type Spec struct {
	Index, Count int
}

// Sharded reports whether the run is split (1/1 counts: it records the shard, so that a
// result can be merged with other GPUs' results).
func (s Spec) Sharded() bool { return s.Count > 0 }

// String is "i/n", as Parse reads it.
func (s Spec) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// Parse reads "i/n": 1 <= i <= n <= Max, decimal, no sign. Spaces around the numbers are
// allowed (a matrix expression may leave one).
func Parse(text string) (Spec, error) {
	bad := func(why string) (Spec, error) {
		return Spec{}, fmt.Errorf("shard %q: %s (want i/n with 1 <= i <= n <= %d, e.g. 2/4)", text, why, Max)
	}
	is, ns, ok := strings.Cut(text, "/")
	if !ok {
		return bad("no /")
	}
	num := func(s string) (int, bool) {
		s = strings.TrimSpace(s)
		if s == "" || len(s) > 4 || strings.TrimLeft(s, "0123456789") != "" {
			return 0, false
		}
		n, err := strconv.Atoi(s)
		return n, err == nil
	}
	i, iok := num(is)
	n, nok := num(ns)
	switch {
	case !iok || !nok:
		return bad("not two decimal numbers")
	case n < 1 || n > Max:
		return bad(fmt.Sprintf("n is %d", n))
	case i < 1 || i > n:
		return bad(fmt.Sprintf("i is %d: shards are numbered from 1", i))
	}
	return Spec{Index: i, Count: n}, nil
}

// Of is the shard (1-based) of n that target belongs to.
func Of(target string, n int) int {
	if n < 1 {
		return 0
	}
	sum := sha256.Sum256([]byte(target))
	return int(binary.BigEndian.Uint64(sum[:8])%uint64(n)) + 1
}

// Owns reports whether target belongs to shard s (an unsharded Spec owns every target).
func (s Spec) Owns(target string) bool {
	return !s.Sharded() || Of(target, s.Count) == s.Index
}

// Select keeps the names s owns, in their order.
func (s Spec) Select(names []string) []string {
	out := []string{}
	for _, n := range names {
		if s.Owns(n) {
			out = append(out, n)
		}
	}
	return out
}
