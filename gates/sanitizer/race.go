package sanitizer

import (
	"fmt"
	"strconv"
	"strings"
)

// raceSide is the other side of a racecheck analysis report: the accesses one "and Write
// access at f.cu:509 [480 hazards]" line (or one XML <destination>) names, with its hazards.
type raceSide struct {
	dir, file string
	line      int
	hazards   int
	// counted: the report gave the side's hazards (a text report may leave them out).
	counted bool
}

// addSide adds s to sides, summing the hazards of a side already there: racecheck names
// the same source line once per instruction (16 "Write access at ...:509" lines for one
// unrolled store), which is one side to whoever fixes the code.
func addSide(sides []raceSide, s raceSide) []raceSide {
	for i := range sides {
		if sides[i].dir == s.dir && sides[i].file == s.file && sides[i].line == s.line {
			sides[i].hazards += s.hazards
			sides[i].counted = sides[i].counted || s.counted
			return sides
		}
	}
	return append(sides, s)
}

// raceAccess writes an analysis record's Access: the first access, then each side once
// with its hazards; a side in the same file as the one before it is written by its line
// alone ("Write access at f.cu:509 [7936 hazards], :510 [7936 hazards]").
func raceAccess(first string, sides []raceSide) string {
	if len(sides) == 0 {
		return first
	}
	var b strings.Builder
	b.WriteString(first + " and ")
	for i, s := range sides {
		if i > 0 {
			b.WriteString(", ")
		}
		if i > 0 && sides[i-1].dir == s.dir && sides[i-1].file == s.file && s.line > 0 {
			b.WriteString(":" + strconv.Itoa(s.line))
		} else {
			b.WriteString(s.dir + " access at " + locString(s.file, s.line))
		}
		if s.counted {
			fmt.Fprintf(&b, " [%d hazards]", s.hazards)
		}
	}
	return b.String()
}

// absorb adds o, a record of the same group (key), to r: its count and hazards, and an
// analysis record's other sides, each kept once with its hazards summed.
func (r *Record) absorb(o Record) {
	r.Count += o.Count
	r.Hazards += o.Hazards
	if o.sides == nil {
		return
	}
	// r's sides may be shared with the record r was copied from.
	sides := append([]raceSide(nil), r.sides...)
	for _, s := range o.sides {
		sides = addSide(sides, s)
	}
	r.sides = sides
	r.Access = raceAccess(r.raceFirst(), sides)
}

// raceFirst is an analysis record's first access ("Read access at f.cu:519").
func (r Record) raceFirst() string {
	first, _, _ := strings.Cut(r.Access, " and ")
	return first
}
