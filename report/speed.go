package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The speedup gate's comparisons, as README documents its data.comparisons[]: the one place
// where the markdown reads a gate's own data, for words and a chart that its table cannot
// give. Data that is absent or does not parse as this shows neither.

// speedGate names the gate whose data.comparisons[] is charted.
const speedGate = speedup.Name

// maxChartPairs is the most kernel × shape pairs the chart shows (the worst).
const maxChartPairs = 20

type speedRecord struct {
	Kernel  string   `json:"kernel"`
	Shape   string   `json:"shape"`
	Verdict string   `json:"verdict"`
	Ratio   *float64 `json:"ratio"`
	CILow   *float64 `json:"ci_low"`
	CIHigh  *float64 `json:"ci_high"`
	Rounds  int      `json:"rounds"`
	// BaseMedianUs and HeadMedianUs are each side's median launch time (absent in results
	// made before kernel-gate recorded them: the chart then shows base = 100).
	BaseMedianUs *float64 `json:"base_median_us"`
	HeadMedianUs *float64 `json:"head_median_us"`
	// WallSeconds is the wall time the A/B runner took to the verdict; Stopped why an
	// inconclusive pair got no more rounds (both absent where no runner timed it).
	WallSeconds *float64 `json:"wall_seconds"`
	Stopped     string   `json:"stopped"`
	Reference   *struct {
		Name    string   `json:"name"`
		Speedup *float64 `json:"speedup"`
		Goal    *float64 `json:"goal"`
		Verdict string   `json:"verdict"`
	} `json:"speedup_vs_reference"`
}

// speedComparisons decodes the speedup gate's data.comparisons[], worst first: slower, then
// inconclusive, anything else, same and faster, each by ratio (head / base) descending.
// nil for another gate, or data that is absent or does not parse.
func speedComparisons(g result.Gate) []speedRecord {
	if strings.TrimSpace(g.Name) != speedGate || len(g.Data) == 0 {
		return nil
	}
	var d struct {
		Comparisons []speedRecord `json:"comparisons"`
	}
	if err := json.Unmarshal(g.Data, &d); err != nil {
		return nil
	}
	rank := func(v string) int {
		switch v {
		case "slower":
			return 0
		case "inconclusive":
			return 1
		case "same":
			return 3
		case "faster":
			return 4
		}
		return 2
	}
	ratio := func(c speedRecord) float64 {
		if c.Ratio == nil || math.IsNaN(*c.Ratio) {
			return math.Inf(-1)
		}
		return *c.Ratio
	}
	cs := slices.Clone(d.Comparisons)
	slices.SortStableFunc(cs, func(a, b speedRecord) int {
		if c := cmp.Compare(rank(a.Verdict), rank(b.Verdict)); c != 0 {
			return c
		}
		return cmp.Compare(ratio(b), ratio(a))
	})
	return cs
}

// speedIcon marks a comparison's verdict; speedWords says slower and faster, the others
// are named after the words.
func speedIcon(v string) (icon, word string) {
	switch v {
	case "slower":
		return "❌", ""
	case "faster":
		return "🚀", ""
	case "inconclusive":
		return "⚠️", "inconclusive"
	case "same":
		return "✅", "same: within the margin"
	case "":
		return "❔", "no verdict"
	}
	return "❔", md(v)
}

// stoppedWords says why an inconclusive pair got no more rounds; "" when the data does not.
func stoppedWords(stopped string) string {
	switch stopped {
	case "wall_budget":
		return "the wall budget was spent"
	case "run_wall_budget":
		return "the run's wall budget was spent"
	case "rounds_budget":
		return "the rounds budget was spent"
	case "budget_spent":
		return "max_rounds or the GPU-time budget was reached"
	}
	return ""
}

// wallWords says how long the runner took to a pair's verdict: "12.3 s of wall time"; ""
// without a usable number.
func wallWords(c speedRecord) string {
	w := c.WallSeconds
	if w == nil || !(*w >= 0) || *w > 1e9 {
		return ""
	}
	return strconv.FormatFloat(*w, 'f', 1, 64) + " s of wall time"
}

// speedWords says head vs base in words, as the speedup gate does: "6.0% slower (5.7–6.3%),
// 32 rounds".
func speedWords(c speedRecord) string {
	finite := func(p *float64) bool { return p != nil && !math.IsNaN(*p) && !math.IsInf(*p, 0) }
	if !finite(c.Ratio) {
		return "no ratio"
	}
	rounds := numtext.Count(c.Rounds, "round")
	if c.Rounds == 0 {
		rounds = "no rounds with samples: noise not assessed"
	}
	d := 100 * (*c.Ratio - 1)
	if !finite(c.CILow) || !finite(c.CIHigh) {
		return signedPercent(d) + " (no interval), " + rounds
	}
	lo, hi := 100*(*c.CILow-1), 100*(*c.CIHigh-1)
	switch {
	case lo >= 0 && d >= 0:
		return fmt.Sprintf("%.1f%% slower (%.1f–%.1f%%), %s", d, lo, hi, rounds)
	case hi <= 0 && d <= 0:
		return fmt.Sprintf("%.1f%% faster (%.1f–%.1f%%), %s", -d, -hi, -lo, rounds)
	}
	return signedPercent(d) + " (" + signedPercent(lo) + " to " + signedPercent(hi) + "), " + rounds
}

// signedPercent renders a percentage with its sign: "+2.3%", "−0.4%", "0.0%".
func signedPercent(v float64) string {
	switch {
	case math.Abs(v) < 0.05:
		return "0.0%"
	case v < 0:
		return fmt.Sprintf("−%.1f%%", -v)
	}
	return fmt.Sprintf("+%.1f%%", v)
}

// referenceWords says the speedup over the reference: "0.458× torch.sdpa.flash, goal 0.15×
// met"; "" without one.
func referenceWords(c speedRecord) string {
	ref := c.Reference
	if ref == nil || ref.Speedup == nil || math.IsNaN(*ref.Speedup) {
		return ""
	}
	name := strings.TrimSpace(ref.Name)
	if name == "" {
		name = "the reference"
	}
	s := strconv.FormatFloat(*ref.Speedup, 'g', 3, 64) + "× " + md(name)
	if ref.Goal != nil && *ref.Goal > 0 {
		s += ", goal " + formatNum(*ref.Goal) + "×"
		if v := strings.TrimSpace(ref.Verdict); v != "" {
			s += " " + md(v)
		}
	}
	return s
}

// mdSpeedVerdicts lists head vs base per kernel × shape in words, worst first; past foldRows
// the rest is folded.
func mdSpeedVerdicts(cs []speedRecord) string {
	var b strings.Builder
	b.WriteString("\n**Head vs base** per kernel × shape, worst first:\n\n")
	for i, c := range cs {
		if i == foldRows {
			b.WriteString("\n<details><summary>" + numtext.Count(len(cs)-i, "more comparison") + "</summary>\n\n")
		}
		icon, word := speedIcon(c.Verdict)
		line := "- " + icon + " **" + md(c.Kernel) + " × " + md(c.Shape) + "**: " + speedWords(c)
		if w := wallWords(c); w != "" {
			line += ", " + w
		}
		if why := stoppedWords(c.Stopped); why != "" && c.Verdict == "inconclusive" {
			word += ": " + why
		}
		if word != "" {
			line += " (" + word + ")"
		}
		if r := referenceWords(c); r != "" {
			line += "; " + r
		}
		b.WriteString(line + "\n")
	}
	if len(cs) > foldRows {
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

// mermaidSpeedChart is a Mermaid xychart of head's time against base's per kernel × shape,
// base = 100 (the gate's data has the ratio of the times, not the times), as a fenced block;
// "" when no comparison has a ratio. Mermaid draws the bars of two series on top of each
// other, so each pair has two rows, "K × S: base" and "K × S: head +6.0%", each with its
// series' bar and a zero in the other; the value axis's labels are hidden so that the zero
// bars take no space.
func mermaidSpeedChart(cs []speedRecord) string {
	var pairs []speedRecord
	total := 0
	for _, c := range cs { // worst first
		if c.Ratio == nil || math.IsNaN(*c.Ratio) || math.IsInf(*c.Ratio, 0) || *c.Ratio <= 0 || *c.Ratio > 1e6 {
			continue
		}
		total++
		if len(pairs) < maxChartPairs {
			pairs = append(pairs, c)
		}
	}
	if len(pairs) == 0 {
		return ""
	}

	labels := make([]string, 0, 2*len(pairs))
	base := make([]string, 0, 2*len(pairs))
	head := make([]string, 0, 2*len(pairs))
	seen := map[string]int{}
	unique := func(s string) string {
		seen[s]++
		if n := seen[s]; n > 1 {
			s += " (" + strconv.Itoa(n) + ")"
		}
		return s
	}
	// Times in µs when every pair has both sides' medians, else head relative to base = 100.
	micro := true
	for _, c := range pairs {
		micro = micro && usable(c.BaseMedianUs) && usable(c.HeadMedianUs)
	}
	top := 0.0
	for _, c := range pairs {
		name := chartName(c.Kernel, c.Shape)
		b, h := 100.0, 100**c.Ratio
		if micro {
			b, h = *c.BaseMedianUs, *c.HeadMedianUs
		}
		top = max(top, b, h)
		labels = append(labels,
			mermaidString(unique(name+": base")),
			mermaidString(unique(name+": head "+signedPercent(100**c.Ratio-100))))
		base = append(base, strconv.FormatFloat(math.Round(b*100)/100, 'f', -1, 64), "0")
		head = append(head, "0", strconv.FormatFloat(h, 'f', 2, 64))
	}
	title, axis := "Time per kernel × shape: base (grey) vs head (blue), base = 100", "time, % of base"
	if micro {
		title, axis = "Median time per kernel × shape: base (grey) vs head (blue), µs", "time, µs"
	}
	if total > len(pairs) {
		title += ", the " + strconv.Itoa(len(pairs)) + " worst of " + strconv.Itoa(total)
	}
	height := 110 + 28*len(labels)
	var b strings.Builder
	b.WriteString("\n```mermaid\n")
	b.WriteString(`%%{init: {"xyChart": {"width": 900, "height": ` + strconv.Itoa(height) +
		`, "plotReservedSpacePercent": 45, "yAxis": {"showLabel": false}}, "themeVariables": {"xyChart": {"plotColorPalette": "#8c959f, #0969da"}}}}%%` + "\n")
	b.WriteString("xychart-beta horizontal\n")
	b.WriteString("  title " + mermaidString(title) + "\n")
	b.WriteString("  x-axis " + mermaidString("kernel × shape") + " [" + strings.Join(labels, ", ") + "]\n")
	b.WriteString("  y-axis " + mermaidString(axis) + " 0 --> " + strconv.FormatFloat(niceCeil(top*1.05), 'f', -1, 64) + "\n")
	b.WriteString("  bar [" + strings.Join(base, ", ") + "]\n")
	b.WriteString("  bar [" + strings.Join(head, ", ") + "]\n")
	b.WriteString("```\n")
	return b.String()
}

// usable reports whether a time can be drawn.
func usable(v *float64) bool { return v != nil && *v > 0 && *v < 1e12 && !math.IsInf(*v, 0) }

// niceCeil rounds an axis's top up to one or two significant digits (1.05 µs → 1.1, 137 →
// 140).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	step := math.Pow(10, math.Floor(math.Log10(v))-1)
	return math.Ceil(v/step) * step
}

// maxLabelWidth is the widest a chart label may be (mermaidWidth, with ": head +12.3%"):
// Mermaid leaves out every label when the widest does not fit beside the bars.
const maxLabelWidth = 56

// chartName is "kernel × shape" for a chart label, the kernel and the shape shortened in the
// middle until the label fits maxLabelWidth.
func chartName(kernel, shape string) string {
	kernel, shape = clean(kernel), clean(shape)
	for k, sh := 26, 12; ; k, sh = k-1, max(sh-1, 6) {
		name := truncMiddle(kernel, k) + " × " + truncMiddle(shape, sh)
		if mermaidWidth(name)+len(": head +12.3%") <= maxLabelWidth || k <= 1 {
			return name
		}
	}
}

// mermaidString quotes untrusted text as a Mermaid string. Control characters and line
// breaks are cleaned first (clean); then the characters that mean something to Mermaid or
// to the page become Mermaid entities "#NNN;", which Mermaid turns back into the character
// in the drawing: '"' (would end the string), '%' (a "%%{" anywhere is read as a
// directive), '#' (would start an entity), '&', '<' and '>' (Mermaid's sanitizer would show
// them as "&lt;" or drop what looks like a tag), '`' (a string that starts with one is
// markdown) and any character that does not print. The text can then neither end its
// string, nor set Mermaid's configuration, nor close the code fence (it stays on its line),
// nor carry markup. Other characters stay, so that Mermaid measures labels right: it
// measures an entity as its placeholder, several characters wide, and leaves out every
// label when the widest does not fit.
func mermaidString(s string) string {
	s = clean(s)
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if mermaidEntity(r) {
			b.WriteString("#" + strconv.Itoa(int(r)) + ";")
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func mermaidEntity(r rune) bool {
	return strings.ContainsRune("\"%#&<>`", r) || (r != ' ' && !unicode.IsPrint(r))
}

// mermaidWidth is about how wide Mermaid measures text as mermaidString writes it, in
// characters: an entity counts as its placeholder's 7.
func mermaidWidth(s string) int {
	n := 0
	for _, r := range clean(s) {
		if mermaidEntity(r) {
			n += 7
		} else {
			n++
		}
	}
	return n
}
