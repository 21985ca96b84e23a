package shard

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"1/1", Spec{1, 1}, ""},
		{"2/4", Spec{2, 4}, ""},
		{" 3 / 4 ", Spec{3, 4}, ""},
		{"256/256", Spec{256, 256}, ""},
		{"0/4", Spec{}, "i is 0: shards are numbered from 1"},
		{"5/4", Spec{}, "i is 5"},
		{"1/0", Spec{}, "n is 0"},
		{"1/257", Spec{}, "n is 257"},
		{"2", Spec{}, "no /"},
		{"", Spec{}, "no /"},
		{"-1/4", Spec{}, "not two decimal numbers"},
		{"+1/4", Spec{}, "not two decimal numbers"},
		{"1/4/5", Spec{}, "not two decimal numbers"},
		{"a/b", Spec{}, "not two decimal numbers"},
		{"1/", Spec{}, "not two decimal numbers"},
		{"1/99999999999999999999", Spec{}, "not two decimal numbers"},
		{"1.0/4", Spec{}, "not two decimal numbers"},
	} {
		got, err := Parse(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Parse(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
		}
	}
	if s := (Spec{2, 4}); s.String() != "2/4" || !s.Sharded() || (Spec{}).Sharded() {
		t.Error("String or Sharded")
	}
}

func names(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("target-%d", i))
	}
	return out
}

// Every target is in exactly one shard, and the shards together are all the targets, for
// every n.
func TestSelectCoversAllOnce(t *testing.T) {
	all := append(names(200), "attention", "gemm", "softmax", "", "ümlaut <T>")
	for n := 1; n <= 17; n++ {
		seen := map[string]int{}
		for i := 1; i <= n; i++ {
			for _, name := range (Spec{i, n}).Select(all) {
				seen[name]++
				if Of(name, n) != i {
					t.Fatalf("n=%d: %q selected by shard %d but Of says %d", n, name, i, Of(name, n))
				}
			}
		}
		for _, name := range all {
			if seen[name] != 1 {
				t.Fatalf("n=%d: %q is in %d shards, want 1", n, name, seen[name])
			}
		}
	}
}

// Adding a target (anywhere in the list) never moves another: a shard's selection before
// is its selection after, less the new target.
func TestAddingATargetMovesNoOther(t *testing.T) {
	before := names(50)
	for n := 1; n <= 8; n++ {
		for pos := 0; pos <= len(before); pos++ {
			after := slices.Insert(slices.Clone(before), pos, "newcomer")
			for i := 1; i <= n; i++ {
				s := Spec{i, n}
				got := slices.DeleteFunc(s.Select(after), func(x string) bool { return x == "newcomer" })
				if want := s.Select(before); !slices.Equal(got, want) {
					t.Fatalf("n=%d, new target at %d: shard %d had %q, now %q", n, pos, i, want, got)
				}
			}
		}
	}
	// Reordering moves nothing either.
	rev := slices.Clone(before)
	slices.Reverse(rev)
	for _, name := range before {
		if Of(name, 5) != Of(name, 5) {
			t.Fatal("not deterministic")
		}
	}
	for i := 1; i <= 5; i++ {
		a, b := Spec{i, 5}.Select(before), Spec{i, 5}.Select(rev)
		slices.Sort(a)
		slices.Sort(b)
		if !slices.Equal(a, b) {
			t.Fatalf("shard %d/5 depends on the order: %q vs %q", i, a, b)
		}
	}
}

// The assignment is fixed: these values are part of the contract (a runner's targets must
// not move between kernel-gate versions), and of the tests that split this repository's
// own targets.
func TestOfIsStable(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want int
	}{
		{"attention", 2, 2}, {"gemm", 2, 1}, {"softmax", 2, 1},
		{"attention", 4, 4}, {"gemm", 4, 1}, {"softmax", 4, 3},
		{"anything", 1, 1},
	} {
		if got := Of(tc.name, tc.n); got != tc.want {
			t.Errorf("Of(%q, %d) = %d, want %d", tc.name, tc.n, got, tc.want)
		}
	}
	if Of("x", 0) != 0 || !(Spec{}).Owns("x") {
		t.Error("unsharded")
	}
}

// The hash spreads many targets evenly (within 25% of the mean on 4000 names over 8 shards).
func TestOfIsBalanced(t *testing.T) {
	count := make([]int, 9)
	for _, name := range names(4000) {
		count[Of(name, 8)]++
	}
	for i := 1; i <= 8; i++ {
		if count[i] < 375 || count[i] > 625 {
			t.Errorf("shard %d/8 got %d of 4000 targets", i, count[i])
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1/1", "2/4", " 3 / 4 ", "0/0", "256/256", "1/257", "-1/2", "1/2/3", "9999/9999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			return
		}
		if s.Index < 1 || s.Index > s.Count || s.Count > Max {
			t.Fatalf("Parse(%q) = %v: out of range", in, s)
		}
		if back, err := Parse(s.String()); err != nil || back != s {
			t.Fatalf("round trip of %v: %v, %v", s, back, err)
		}
	})
}
