package configpos

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// KernelMatch is a kernel rule's match resolved: the correctness and speedup sections'
// kernels lists hold rules that apply to the results whose kernel matches a glob and, when
// the rule names shapes, whose shape is one of them.
type KernelMatch struct {
	// Glob is the rule's match.
	Glob kernelname.Glob
	// From names the rule in messages: "kernel-gate.yml:12 (flash_fwd* × long)".
	From   string
	shapes []string
}

// Matches reports whether the rule applies to a kernel × shape.
func (m KernelMatch) Matches(name kernelname.Name, shape string) bool {
	return name.Matches(m.Glob) && (len(m.shapes) == 0 || slices.Contains(m.shapes, shape))
}

// KernelRule resolves the match of rule i of the section's kernels list (section names it in
// messages: "speedup"), which sits at line. It returns the match, the prefix of the rule's
// messages ("kernel-gate.yml:12: speedup.kernels[0] (match \"flash_fwd*\")") and the
// problems of its match and shapes: an empty glob, an empty shape.
func (o Origin) KernelRule(section string, i, line int, match string, shapes []string) (KernelMatch, string, []error) {
	described := match
	if len(shapes) > 0 {
		described += " × " + strings.Join(shapes, ", ")
	}
	m := KernelMatch{Glob: kernelname.Glob(match), From: fmt.Sprintf("%s (%s)", o.Where(line), described), shapes: shapes}
	prefix := fmt.Sprintf("%s: %s.kernels[%d] (match %q)", o.Where(line), section, i, match)
	var errs []error
	if !m.Glob.Valid() {
		errs = append(errs, fmt.Errorf("%s: match must be a non-empty kernel glob", prefix))
	}
	for j, s := range shapes {
		if strings.TrimSpace(s) == "" {
			errs = append(errs, fmt.Errorf("%s: shapes[%d] is empty", prefix, j))
		}
	}
	return m, prefix, errs
}
