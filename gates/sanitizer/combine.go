package sanitizer

import (
	"fmt"
	"strings"
)

// Combine merges what one run wrote to its XML record file (x, from ParseXML) and printed
// as text (t, from ParseText): the text gives the summary counts, the print-limit count,
// the exit code and the reasons a run stopped; the XML gives the records, with full source
// paths and the launched kernel's mangled name. The XML's records are used when it is
// complete and agrees with the text; otherwise the text's, with a Problem saying why. A
// racecheck hazard-mode XML carries no error/warning levels, so there the text's records
// are used.
func Combine(x, t Run) Run {
	out := t
	out.XML = x.XML
	if out.Log == "" {
		out.Log = t.Log
	}
	out.Problems = append([]string(nil), t.Problems...)
	out.Notes = append([]string(nil), t.Notes...)
	switch {
	case out.Tool == "":
		out.Tool = x.Tool
	case x.Tool != "" && x.Tool != out.Tool:
		out.Problems = append(out.Problems, fmt.Sprintf("the XML holds %s records but the text output is %s's", x.Tool, out.Tool))
	}
	out.LaunchSeen = t.LaunchSeen || x.LaunchSeen
	if out.RacecheckReport == "" {
		out.RacecheckReport = x.RacecheckReport
	}
	for _, p := range x.Problems {
		out.Problems = append(out.Problems, "XML: "+p)
	}
	if len(x.Problems) > 0 {
		return out
	}
	if x.RacecheckReport == "hazard" || x.RacecheckReport == "all" {
		// Hazard records carry no level in the XML; keep the text's.
		return out
	}
	xp, tp := x.Printed(), t.Printed()
	if xp != tp {
		out.Problems = append(out.Problems, fmt.Sprintf("the XML record file holds %d records but the text output printed %d: one of them is cut", xp, tp))
		if tp >= xp {
			return out
		}
	}
	if !t.Summary {
		out.Errors, out.Warnings = max(t.Errors, x.Errors), max(t.Warnings, x.Warnings)
	}
	out.Source = SourceXML
	out.Records = mergeNames(x.Records, t.Records, out.Tool)
	return out
}

// mergeNames returns the XML records with better kernel names taken from the text where
// the XML has only the bare function name (racecheck analysis records have no host stack,
// so no mangled name), regrouped.
func mergeNames(xr, tr []Record, tool string) []Record {
	out := make([]Record, 0, len(xr))
	idx := map[recordKey]int{}
	for _, r := range xr {
		r.Tool = tool
		if r.Kernel != "" && !strings.HasPrefix(r.Kernel, "_Z") {
			for _, t := range tr {
				if t.Kind == r.Kind && t.Line == r.Line && baseFile(t.File) == baseFile(r.File) &&
					t.Kernel != "" && displayName(t.Kernel) == displayName(r.Kernel) {
					r.Kernel = t.Kernel
					r.Function = fullName(t.Kernel)
					break
				}
			}
		}
		k := r.key()
		if i, ok := idx[k]; ok {
			out[i].Count += r.Count
			out[i].Hazards += r.Hazards
			continue
		}
		idx[k] = len(out)
		out = append(out, r)
	}
	return out
}
