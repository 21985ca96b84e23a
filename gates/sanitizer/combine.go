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
//
// The bare name is the function's own, without namespace or template arguments:
// <func>flash_fwd</func> for kg::flash_fwd<64, 64, false>. When it matches the display
// name of a text record at the same kind, file and line, that record's name is taken;
// otherwise, when exactly one kernel of those text records has that bare name, its name.
// Two kernels with the same bare name (two instantiations of one template) cannot be told
// apart by the XML, so the bare name stays.
func mergeNames(xr, tr []Record, tool string) []Record {
	out := make([]Record, 0, len(xr))
	idx := map[recordKey]int{}
	for _, r := range xr {
		r.Tool = tool
		if r.Kernel != "" && !strings.HasPrefix(r.Kernel, "_Z") {
			found, bare := "", map[string]bool{}
			for _, t := range tr {
				if t.Kind != r.Kind || t.Line != r.Line || baseFile(t.File) != baseFile(r.File) || t.Kernel == "" {
					continue
				}
				if displayName(t.Kernel) == displayName(r.Kernel) {
					found = t.Kernel
					break
				}
				if isBareName(r.Kernel) && bareName(t.Kernel) == r.Kernel {
					bare[t.Kernel] = true
				}
			}
			if found == "" && len(bare) == 1 {
				for k := range bare {
					found = k
				}
			}
			if found != "" {
				r.Kernel = found
				r.Function = fullName(found)
			}
		}
		k := r.key()
		if i, ok := idx[k]; ok {
			out[i].absorb(r)
			continue
		}
		idx[k] = len(out)
		out = append(out, r)
	}
	return out
}

// isBareName reports a function name without scope, template arguments or parameters, as
// the XML's <func> gives it ("flash_fwd").
func isBareName(k string) bool {
	return k != "" && !strings.ContainsAny(k, ":<>() ")
}

// bareName returns a kernel's name without return type, scope, template arguments and
// parameters: "flash_fwd" for _ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if or
// for "void kg::flash_fwd<(int)64, (int)64, (bool)0>(const __half *, ...)".
func bareName(k string) string {
	b := name(k).Base
	if i := strings.IndexByte(b, '<'); i > 0 {
		b = b[:i]
	}
	return strings.TrimSpace(b)
}
