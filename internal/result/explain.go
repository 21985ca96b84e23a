package result

import "strings"

// Explanation says why a kernel got slower or heavier between base and head, from numbers
// kernel-gate measured: both sides' ptxas records, their SASS, the GPU's occupancy limits
// and, where it ran, Nsight Compute (package explain builds it). It rides on the finding it
// explains (Finding.Explain) and is documented in docs/result.md.
type Explanation struct {
	// Sentence is the finding's headline and its first clauses (SentenceShows), then how
	// many more Clauses holds: "5.0% slower: barriers +100% (16 → 32); occupancy
	// unchanged (8 warps/SM, limited by registers); and 3 more clauses". Reports show it
	// after the finding's message.
	Sentence string `json:"sentence"`
	// Clauses are every reason, most telling for the finding's kind first (package
	// explain's ranking); each names its source. A summary lists them all.
	Clauses []Clause `json:"clauses"`
	// Resources are ptxas's figures that changed, base → head.
	Resources []Change `json:"resources,omitempty"`
	// Occupancy is theoretical occupancy on the runner's GPU at the launch's block size.
	Occupancy *OccupancyChange `json:"occupancy,omitempty"`
	// Mix is the SASS instruction mix per class that changed, biggest change first.
	Mix []Change `json:"instruction_mix,omitempty"`
	// Profile is Nsight Compute's fixed metric set on both sides, where it ran.
	Profile []Change `json:"profile,omitempty"`
}

// SentenceClauses is how many clauses an Explanation's Sentence shows where it leaves
// some out: short enough to read beside a finding; the rest are in its Clauses.
const SentenceClauses = 5

// SentenceShows is how many of n clauses the Sentence shows: all of them where at most one
// more than SentenceClauses (leaving one out would save nothing), else SentenceClauses.
func SentenceShows(n int) int {
	if n <= SentenceClauses+1 {
		return n
	}
	return SentenceClauses
}

// Clause is one reason, with where its numbers come from: "ptxas", "sass", "occupancy",
// "ncu" or "timing".
type Clause struct {
	Text   string `json:"text"`
	Source string `json:"source"`
}

// Change is one figure on both sides.
type Change struct {
	Name string  `json:"name"`
	Unit string  `json:"unit,omitempty"`
	Base float64 `json:"base"`
	Head float64 `json:"head"`
}

// OccupancyChange is a kernel's theoretical occupancy on both sides.
type OccupancyChange struct {
	// GPU is the compute capability the limits are for ("9.0").
	GPU string `json:"gpu"`
	// BlockSize is the launch's threads per block and BlockSizeFrom where it was read:
	// "ncu" (launch__block_size), "harness" (kernel-gate/bench/v1) or "option" (kernel-gate
	// explain --block-size).
	BlockSize     int       `json:"block_size"`
	BlockSizeFrom string    `json:"block_size_from"`
	Base          Occupancy `json:"base"`
	Head          Occupancy `json:"head"`
}

// Occupancy is one side's blocks and warps per SM and the resource that limits them.
type Occupancy struct {
	BlocksPerSM int     `json:"blocks_per_sm"`
	WarpsPerSM  int     `json:"warps_per_sm"`
	Occupancy   float64 `json:"occupancy"`
	Limiter     string  `json:"limiter"`
}

// Why is what the finding's explanation says, for a reader of its message: the whole
// sentence (a report, a summary) or only its first clause (an annotation beside a source
// line, where space is short), after "why: ". Empty when the finding has none.
func (f Finding) Why(whole bool) string {
	e := f.Explain
	if e == nil {
		return ""
	}
	if !whole && len(e.Clauses) > 0 {
		return "why: " + strings.TrimSpace(e.Clauses[0].Text)
	}
	if s := strings.TrimSpace(e.Sentence); s != "" {
		return "why: " + s
	}
	return ""
}

// MessageWhy is the finding's message with its explanation after it (Why), in
// parentheses where whole, on a line of its own where not.
func (f Finding) MessageWhy(whole bool) string {
	w := f.Why(whole)
	switch {
	case w == "":
		return f.Message
	case whole:
		return strings.TrimSpace(f.Message) + " (" + w + ")"
	}
	return strings.TrimSpace(f.Message) + "\n" + w
}
