// Package toolkit finds which CUDA toolkit built the kernels and checks it against the
// config's constraint (cuda: ">=12.2").
//
// The toolkit version is the one the CUDA tools print in their --version banner:
//
//	Cuda compilation tools, release 13.0, V13.0.88
//
// (nvcc, ptxas, cuobjdump, nvdisasm, nvlink and fatbinary all print it; ptxas also embeds it
// in every cubin's .note.nv.tkinfo section, so nvdisasm listings carry it too). The V triple
// is preferred; without it the release X.Y is read as X.Y.0. clang's
// "Found CUDA installation: /usr/local/cuda, version 12.4" (from clang -v) is read as 12.4.0.
//
// Other lines that mention CUDA are deliberately ignored: nvidia-smi's "CUDA Version: 13.0"
// is the highest CUDA version the DRIVER supports, not the toolkit that built anything;
// compute-sanitizer and ncu print their own "Version 2025.3.1.0"; and prose such as
// "CUDA: 12.8" is not evidence.
package toolkit

import (
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Name is the gate's name in results.
const Name = "toolkit"

// ErrNoVersion reports text that holds no CUDA toolkit version.
var ErrNoVersion = errors.New("no CUDA toolkit version found")

// Version is a toolkit version with where it was read.
type Version struct {
	Semver *semver.Version // e.g. 13.0.88
	Raw    string          // the text it came from, e.g. "Cuda compilation tools, release 13.0, V13.0.88"
	Source string          // e.g. "build.log:3" or "nvcc --version"
}

// String returns the version, e.g. "13.0.88" ("unknown" when Semver is nil).
func (v Version) String() string {
	if v.Semver == nil {
		return "unknown"
	}
	return v.Semver.String()
}

const (
	// nvccMarker is the part of the banner line that is searched for; the "Cuda " (or
	// "CUDA ") before it is checked separately, so a single case-sensitive search suffices.
	nvccMarker = "compilation tools, release "
	nvccPrefix = "cuda "
	// clangMarker is clang's -v line: "Found CUDA installation: <path>, version 12.4".
	clangMarker  = "Found CUDA installation: "
	clangVersion = ", version "
	// driverMarker is nvidia-smi's driver CUDA version, never taken as the toolkit's.
	driverMarker = "CUDA Version:"
	// maxDigits bounds each numeric component (so it always fits a uint64).
	maxDigits = 9
)

// Scanner finds the toolkit version in log lines as they stream past. Each line costs two
// substring searches unless it holds a version banner. The zero value is ready to use; a
// Scanner is not safe for concurrent use.
type Scanner struct {
	versions []Version
	seen     map[string]bool // by Semver.String()
}

// Line scans one line (without its newline). source and lineNo say where it came from and
// make the Version's Source ("build.log:3"); lineNo <= 0 leaves the line number out.
func (s *Scanner) Line(source string, lineNo int, line string) {
	hasNVCC := strings.Contains(line, nvccMarker)
	hasClang := strings.Contains(line, clangMarker)
	if !hasNVCC && !hasClang {
		return
	}
	var found []found
	if hasNVCC {
		found = appendNVCC(found, line)
	}
	if hasClang {
		found = appendClang(found, line)
	}
	for _, f := range found {
		key := f.v.String()
		if s.seen[key] {
			continue
		}
		if s.seen == nil {
			s.seen = make(map[string]bool)
		}
		s.seen[key] = true
		s.versions = append(s.versions, Version{Semver: f.v, Raw: f.raw, Source: where(source, lineNo)})
	}
}

// Versions returns the distinct versions seen, in the order they were first seen; each
// keeps the Source of its first sighting.
func (s *Scanner) Versions() []Version {
	if len(s.versions) == 0 {
		return nil
	}
	return append([]Version(nil), s.versions...)
}

func where(source string, lineNo int) string {
	switch {
	case lineNo <= 0:
		return source
	case source == "":
		return fmt.Sprintf("line %d", lineNo)
	default:
		return fmt.Sprintf("%s:%d", source, lineNo)
	}
}

// Parse parses one tool's --version output (nvcc, ptxas, cuobjdump, nvdisasm, ...) and
// returns the first toolkit version in it. The Version's Source is left empty for the
// caller to fill. Text with no version gives an error wrapping ErrNoVersion.
func Parse(text string) (Version, error) {
	var s Scanner
	driver := ""
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		s.Line("", 0, line)
		if vs := s.versions; len(vs) > 0 {
			return vs[0], nil
		}
		if j := strings.Index(line, driverMarker); j >= 0 && driver == "" {
			v, _, _ := strings.Cut(strings.TrimSpace(line[j+len(driverMarker):]), " ")
			driver = fmt.Sprintf("%q (line %d)", driverMarker+" "+msgtext.Clip(v, 20), i+1)
		}
	}
	if driver != "" {
		return Version{}, fmt.Errorf("%w: only %s, which is the driver's CUDA version (nvidia-smi), not the toolkit's", ErrNoVersion, driver)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if first == "" {
		return Version{}, fmt.Errorf("%w: empty output", ErrNoVersion)
	}
	return Version{}, fmt.Errorf("%w: no %q line in output starting %q", ErrNoVersion, "Cuda compilation tools", msgtext.Clip(first, 80))
}

// found is one version read from a line.
type found struct {
	v   *semver.Version
	raw string
}

// appendNVCC reads every "Cuda compilation tools, release X.Y[, VX.Y.Z]" in line.
func appendNVCC(out []found, line string) []found {
	for off := 0; off < len(line); {
		i := strings.Index(line[off:], nvccMarker)
		if i < 0 {
			break
		}
		i += off
		off = i + len(nvccMarker)
		start := i - len(nvccPrefix)
		if start < 0 || !strings.EqualFold(line[start:i], nvccPrefix) {
			continue
		}
		major, j, ok := readNum(line, off)
		if !ok || j >= len(line) || line[j] != '.' {
			continue
		}
		minor, j, ok := readNum(line, j+1)
		if !ok || followsNumber(line, j) {
			continue
		}
		v, end := semver.New(major, minor, 0, "", ""), j
		if strings.HasPrefix(line[j:], ", V") {
			if full, k, ok := readTriple(line, j+len(", V")); ok {
				v, end = full, k
			}
		}
		out = append(out, found{v: v, raw: line[start:end]})
		off = end
	}
	return out
}

// appendClang reads clang's "Found CUDA installation: <path>, version X.Y[.Z]".
func appendClang(out []found, line string) []found {
	i := strings.Index(line, clangMarker)
	if i < 0 {
		return out
	}
	rest := i + len(clangMarker)
	k := strings.Index(line[rest:], clangVersion)
	if k < 0 {
		return out
	}
	j := rest + k + len(clangVersion)
	major, j, ok := readNum(line, j)
	if !ok || j >= len(line) || line[j] != '.' {
		return out
	}
	minor, j, ok := readNum(line, j+1)
	if !ok {
		return out
	}
	patch := uint64(0)
	if j < len(line) && line[j] == '.' {
		p, k, ok := readNum(line, j+1)
		if !ok {
			return out
		}
		patch, j = p, k
	}
	if followsNumber(line, j) {
		return out
	}
	return append(out, found{v: semver.New(major, minor, patch, "", ""), raw: line[i:j]})
}

// readTriple reads "X.Y.Z" at line[i:], not followed by more of a number.
func readTriple(line string, i int) (*semver.Version, int, bool) {
	var n [3]uint64
	for c := range n {
		if c > 0 {
			if i >= len(line) || line[i] != '.' {
				return nil, 0, false
			}
			i++
		}
		var ok bool
		if n[c], i, ok = readNum(line, i); !ok {
			return nil, 0, false
		}
	}
	if followsNumber(line, i) {
		return nil, 0, false
	}
	return semver.New(n[0], n[1], n[2], "", ""), i, true
}

// readNum reads 1 to maxDigits decimal digits at line[i:] and returns the value and the
// index after them; a longer run of digits is refused.
func readNum(line string, i int) (uint64, int, bool) {
	var n uint64
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		if j-i == maxDigits {
			return 0, 0, false
		}
		n = n*10 + uint64(line[j]-'0')
		j++
	}
	return n, j, j > i
}

// followsNumber reports whether line[i:] continues a version number ("13.0.88.1", "13.0x"),
// which makes the number read so far untrustworthy.
func followsNumber(line string, i int) bool {
	if i >= len(line) {
		return false
	}
	c := line[i]
	if c == '.' {
		return i+1 < len(line) && line[i+1] >= '0' && line[i+1] <= '9'
	}
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-' || c == '+'
}

// data is the gate's machine-readable record.
type data struct {
	Constraint string        `json:"constraint"`
	Versions   []versionData `json:"versions"`
	// Error is why no version could be looked up, when the caller said.
	Error string `json:"error,omitempty"`
}

type versionData struct {
	Version string `json:"version"`
	Raw     string `json:"raw"`
	Source  string `json:"source"`
	// Satisfies is absent when no constraint was judged.
	Satisfies *bool `json:"satisfies,omitempty"`
}

// Check judges every version against constraint (Masterminds semver syntax: ">=12.2",
// "~12.4", "^13", ">=12.2, <14", "12.2" meaning 12.2.x) and returns the gate "toolkit".
//
//   - An empty constraint skips the gate with a notice.
//   - An invalid constraint is a config error: Check returns an error naming it.
//   - A constraint with no version known fails the gate (fail closed); lookupErr says why
//     the version could not be found (e.g. nvcc not on PATH) and may be nil.
//   - Otherwise every version is judged on its release triple (a prerelease or build
//     suffix, which CUDA does not use, is ignored); any version that does not satisfy the
//     constraint is an error finding, and each one that does is a notice.
//
// Check also returns an error for a Version whose Semver is nil (a caller's bug).
func Check(constraint string, versions []Version, lookupErr error) (result.Gate, error) {
	g := result.Gate{Name: Name, Findings: []result.Finding{}}
	d := data{Constraint: constraint, Versions: []versionData{}}
	if lookupErr != nil {
		d.Error = lookupErr.Error()
	}
	for i, v := range versions {
		if v.Semver == nil {
			return result.Gate{}, fmt.Errorf("toolkit gate: version %d (%q from %q) has no semver value", i, v.Raw, v.Source)
		}
		d.Versions = append(d.Versions, versionData{Version: v.Semver.String(), Raw: v.Raw, Source: v.Source})
	}

	if strings.TrimSpace(constraint) == "" {
		g.Summary = "no cuda constraint configured"
		g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Metric: "cuda", Message: "no cuda constraint configured"})
		g.Decide(false)
		return finish(g, d)
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return result.Gate{}, fmt.Errorf("toolkit gate: invalid cuda constraint %q: %w", constraint, err)
	}

	if len(versions) == 0 {
		why := "no `Cuda compilation tools` line was found"
		if lookupErr != nil {
			why = lookupErr.Error()
		}
		msg := fmt.Sprintf("cannot determine the CUDA toolkit version: %s; add `nvcc --version` to the build log or put nvcc on PATH", why)
		g.Summary = fmt.Sprintf("CUDA toolkit version unknown (need %s)", constraint)
		g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Metric: "cuda", Message: msg})
		g.Decide(true)
		return finish(g, d)
	}

	tab := &result.Table{Columns: []string{"CUDA", "Constraint", "Source"}}
	var bad, good []string
	for i, v := range versions {
		release := semver.New(v.Semver.Major(), v.Semver.Minor(), v.Semver.Patch(), "", "")
		ok := c.Check(release)
		d.Versions[i].Satisfies = &ok
		from := ""
		if v.Source != "" {
			from = " (from " + v.Source + ")"
		}
		row := result.Row{Status: result.Pass, Cells: []string{v.Semver.String(), constraint, v.Source}}
		if ok {
			good = append(good, v.Semver.String())
			g.Findings = append(g.Findings, result.Finding{Severity: result.Notice, Metric: "cuda",
				Message: fmt.Sprintf("CUDA %s satisfies %s%s", v.Semver, constraint, from)})
		} else {
			bad = append(bad, v.Semver.String())
			row.Status = result.Fail
			g.Findings = append(g.Findings, result.Finding{Severity: result.Error, Metric: "cuda",
				Message: fmt.Sprintf("CUDA %s does not satisfy %s%s", v.Semver, constraint, from)})
		}
		tab.Rows = append(tab.Rows, row)
	}
	// Worst first: failing rows before passing ones, otherwise in the order seen.
	rows := make([]result.Row, 0, len(tab.Rows))
	for _, st := range []result.Verdict{result.Fail, result.Pass} {
		for _, r := range tab.Rows {
			if r.Status == st {
				rows = append(rows, r)
			}
		}
	}
	tab.Rows = rows
	g.Table = tab
	if len(bad) > 0 {
		g.Summary = fmt.Sprintf("CUDA %s does not satisfy %s", strings.Join(bad, ", "), constraint)
	} else {
		g.Summary = fmt.Sprintf("CUDA %s satisfies %s", strings.Join(good, ", "), constraint)
	}
	g.Decide(true)
	return finish(g, d)
}

func finish(g result.Gate, d data) (result.Gate, error) {
	if err := g.SetData(d); err != nil {
		return result.Gate{}, fmt.Errorf("toolkit gate: %w", err)
	}
	return g, nil
}
