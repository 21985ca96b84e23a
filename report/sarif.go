package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/internal/repopath"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// SARIF 2.1.0 (OASIS), the subset GitHub code scanning reads. Field order is the struct
// order and every list is built in a fixed order, so the same result always renders the
// same bytes.
const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	sarifVersion = "2.1.0"
	// srcRoot is the uriBaseId of every relative path: the repository's checkout.
	srcRoot = "%SRCROOT%"
	infoURI = "https://github.com/kernel-gate/kernel-gate"
)

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                        `json:"tool"`
	OriginalURIBaseIDs map[string]sarifArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Results            []sarifResult                    `json:"results"`
	Properties         *sarifRunProperties              `json:"properties,omitempty"`
}

type sarifRunProperties struct {
	Verdict result.Verdict `json:"verdict"`
	Replay  string         `json:"replay,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
	FullDescription  sarifMessage `json:"fullDescription"`
	Help             sarifMessage `json:"help"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID     string                 `json:"ruleId"`
	RuleIndex  int                    `json:"ruleIndex"`
	Level      string                 `json:"level"`
	Message    sarifMessage           `json:"message"`
	Locations  []sarifLocation        `json:"locations,omitempty"`
	Properties *sarifResultProperties `json:"properties,omitempty"`
}

// sarifResultProperties carries what a finding says beyond its message, as the JSON result
// names it.
type sarifResultProperties struct {
	Gate     string   `json:"gate"`
	Kernel   string   `json:"kernel,omitempty"`
	Arch     string   `json:"arch,omitempty"`
	Metric   string   `json:"metric,omitempty"`
	Value    *float64 `json:"value,omitempty"`
	Limit    *float64 `json:"limit,omitempty"`
	Baseline *float64 `json:"baseline,omitempty"`
	Delta    *float64 `json:"delta,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysicalLocation `json:"physicalLocation"`
}

type sarifPhysicalLocation struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           *sarifRegion          `json:"region,omitempty"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

// DefaultFallback is the file a finding is located at when it names none, or names one
// that cannot be posted (see Options.Fallback).
const DefaultFallback = "kernel-gate.yml"

// renderSARIF writes r as a SARIF 2.1.0 log: one run; one rule per gate × metric (ruleId
// "ptxas/registers", or the gate's name for findings without a metric), sorted by id; one
// result per finding, in the result's order, at level error, warning or note (any other
// severity is a note).
//
// Every result has a location, as GitHub code scanning shows none without one: its file
// as a path in the repository (relative to %SRCROOT%; an absolute path under root made
// relative to it), at its line and column (line 1 for a finding about a whole file). A
// finding without a file, or whose path cannot be posted (one outside the repository:
// "../../etc/passwd", "/etc/passwd", "file:///etc/passwd", "C:\x", a URL; or one that
// would display as another's, with a control or bidirectional character:
// repopath.Rel decides), is located at line 1 of fallback, and a refused path is named
// in its message, escaped. Brackets in messages are escaped as SARIF's plain text wants,
// so that untrusted text cannot make an embedded link; encoding/json escapes the rest.
func renderSARIF(w io.Writer, r result.Result, root, fallback string) error {
	root = cleanRoot(root)
	if filepath.IsAbs(fallback) {
		if rel, ok := result.Under(root, fallback); ok {
			fallback = rel
		}
	}
	if fb, ok := repopath.Rel(filepath.ToSlash(fallback)); ok {
		fallback = fb
	} else {
		fallback = DefaultFallback
	}
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:           "kernel-gate",
			Version:        toolVersion(r.Tool),
			InformationURI: infoURI,
			Rules:          []sarifRule{},
		}},
		Results:    []sarifResult{},
		Properties: &sarifRunProperties{Verdict: r.Verdict, Replay: r.Replay},
	}
	if root != "" && filepath.IsAbs(root) {
		run.OriginalURIBaseIDs = map[string]sarifArtifactLocation{
			srcRoot: {URI: fileURI(filepath.ToSlash(root) + "/")},
		}
	}

	// Rules first, so that each result can carry its rule's index.
	ruleIndex := map[string]int{}
	for _, g := range r.Gates {
		for _, f := range g.Findings {
			id := ruleID(g.Name, f.Metric)
			if _, ok := ruleIndex[id]; !ok {
				ruleIndex[id] = 0
				d := ruleDescription(g.Name, f.Metric)
				run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: d},
					FullDescription: sarifMessage{Text: d}, Help: sarifMessage{Text: d + "; documentation: " + infoURI}})
			}
		}
	}
	slices.SortFunc(run.Tool.Driver.Rules, func(a, b sarifRule) int { return strings.Compare(a.ID, b.ID) })
	for i, rule := range run.Tool.Driver.Rules {
		ruleIndex[rule.ID] = i
	}

	for _, g := range r.Gates {
		for _, f := range g.Findings {
			id := ruleID(g.Name, f.Metric)
			loc, refused := sarifLocationOf(f, root, fallback)
			text := sarifText(f)
			if refused {
				text += " (file " + repopath.Quote(f.File) + ")"
			}
			res := sarifResult{
				RuleID:    id,
				RuleIndex: ruleIndex[id],
				Level:     sarifLevel(f.Severity),
				Message:   sarifMessage{Text: sarifEscape(text)},
				Locations: []sarifLocation{loc},
				Properties: &sarifResultProperties{
					Gate: g.Name, Kernel: f.Kernel, Arch: f.Arch, Metric: f.Metric,
					Value: finite(f.Value), Limit: finite(f.Limit), Baseline: finite(f.Baseline), Delta: finite(f.Delta),
				},
			}
			run.Results = append(run.Results, res)
		}
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // kernel names are full of '<' and '>'
	if err := enc.Encode(sarifLog{Schema: sarifSchema, Version: sarifVersion, Runs: []sarifRun{run}}); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ruleID is "gate/metric", or the gate's name when the finding has no metric. Invalid
// UTF-8 becomes U+FFFD here, as encoding/json would write it, so that two ids that would
// print the same are one rule.
func ruleID(gate, metric string) string {
	gate, metric = jsonText(gate), jsonText(metric)
	gate = strings.TrimSpace(gate)
	if gate == "" {
		gate = "gate"
	}
	if metric = strings.TrimSpace(metric); metric == "" {
		return gate
	}
	return gate + "/" + metric
}

func ruleDescription(gate, metric string) string {
	gate, metric = jsonText(gate), jsonText(metric)
	gate = strings.TrimSpace(gate)
	if gate == "" {
		gate = "unnamed"
	}
	if metric = strings.TrimSpace(metric); metric == "" {
		return "kernel-gate " + gate + " gate"
	}
	return "kernel-gate " + gate + " gate: " + metric
}

func sarifLevel(s result.Severity) string {
	switch s {
	case result.Error:
		return "error"
	case result.Warning:
		return "warning"
	}
	return "note"
}

// sarifText is the finding's message; SARIF requires one, so an empty message is replaced
// by what the finding is about.
func sarifText(f result.Finding) string {
	if strings.TrimSpace(f.Message) != "" {
		return f.MessageWhy(true)
	}
	for _, s := range []string{f.Metric, f.Kernel} {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return "(no message)"
}

// toolVersion is the version in a result's tool ("kernel-gate v0.1.0-dev" → "v0.1.0-dev").
func toolVersion(tool string) string {
	tool = strings.TrimSpace(tool)
	if v, ok := strings.CutPrefix(tool, "kernel-gate "); ok {
		return strings.TrimSpace(v)
	}
	return tool
}

// finite drops values JSON cannot carry (NaN, ±Inf).
func finite(v *float64) *float64 {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return nil
	}
	return v
}

// cleanRoot makes root absolute and clean; "" stays "".
func cleanRoot(root string) string {
	if root == "" {
		return ""
	}
	if abs, err := filepath.Abs(root); err == nil {
		return abs
	}
	return filepath.Clean(root)
}

// sarifLocationOf is where a finding is posted: its file in the repository at its line and
// column, or line 1 of fallback; refused is true when the finding named a file that cannot
// be posted.
func sarifLocationOf(f result.Finding, root, fallback string) (loc sarifLocation, refused bool) {
	rel, ok := "", false
	if f.File != "" {
		rel, ok = repoFile(f.File, root)
	}
	region := &sarifRegion{StartLine: 1}
	if ok {
		if f.Line > 0 {
			region.StartLine = f.Line
			region.StartColumn = max(f.Column, 0)
		}
	} else {
		rel, refused = fallback, f.File != ""
	}
	return sarifLocation{PhysicalLocation: sarifPhysicalLocation{
		ArtifactLocation: sarifArtifactLocation{URI: relativeURI(rel), URIBaseID: srcRoot},
		Region:           region,
	}}, refused
}

// repoFile is file as a path in the repository: an absolute path under root made relative
// to it, then whatever repopath.Rel accepts.
func repoFile(file, root string) (string, bool) {
	if filepath.IsAbs(file) {
		rel, ok := result.Under(root, file)
		if !ok {
			return "", false
		}
		file = rel
	}
	return repopath.Rel(file)
}

// sarifEscape escapes the brackets of plain message text with a backslash, as SARIF
// (§3.11.6) has a literal bracket written, so that no "[text](https://...)" in an
// untrusted message is read as an embedded link.
func sarifEscape(s string) string {
	if !strings.ContainsAny(s, "[]") {
		return s
	}
	return strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s)
}

// relativeURI percent-encodes a relative path (url.URL also guards a first segment with a
// ':' in it, which would read as a scheme).
func relativeURI(p string) string {
	u := url.URL{Path: p}
	return u.String()
}

func fileURI(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows path, C:/x
	}
	u := url.URL{Scheme: "file", Path: p}
	return u.String()
}

// jsonText replaces each byte of invalid UTF-8 in s with U+FFFD, as encoding/json does.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
