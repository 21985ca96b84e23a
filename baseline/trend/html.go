package trend

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
)

// PageOptions describe the page.
type PageOptions struct {
	// Source names where the histories were read ("branch kernel-gate-baseline of o/r",
	// "directory baseline/"); untrusted, escaped.
	Source string
}

// csp forbids everything but the page's own inline style: no script runs and nothing is
// fetched, whatever an entry holds.
const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

const pageStyle = `
body { font-family: -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; font-size: 14px;
       line-height: 1.45; color: #1f2328; background: #fff; margin: 16px auto; max-width: 1240px; padding: 0 16px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 20px; border-bottom: 1px solid #d1d9e0; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 17px; margin-top: 24px; } h4 { font-size: 15px; margin: 20px 0 2px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
.sig { color: #59636e; font-size: 12px; margin: 0 0 6px; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
.note { color: #59636e; } .replay { background: #fff8c5; border: 1px solid #d4a72c; padding: 6px 10px; border-radius: 6px; }
.grid3 { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 8px 20px; }
figure { margin: 0; } figcaption { font-weight: 600; font-size: 13px; }
svg.chart { width: 100%; height: auto; display: block; background: #fff; }
svg.chart text { font-size: 10.5px; fill: #59636e; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
svg.chart .ytick { text-anchor: end; dominant-baseline: middle; } svg.chart .xtick, svg.chart .xdate { text-anchor: middle; }
svg.chart .xtick.end, svg.chart .xdate.end { text-anchor: end; }
svg.chart .grid { stroke: #eaeef2; } svg.chart .axis { stroke: #8c959f; }
svg.chart .change { stroke: #bf8700; stroke-dasharray: 4 3; stroke-width: 1.5; }
svg.chart .line { fill: none; stroke-width: 2; } svg.chart .gap { fill: none; stroke-width: 1.2; stroke-dasharray: 2 4; stroke-opacity: 0.6; } svg.chart .line.limit { stroke: #cf222e; stroke-dasharray: 6 4; stroke-width: 1.5; }
svg.chart .band { stroke: none; fill-opacity: 0.22; } svg.chart .bar { stroke-width: 6; stroke-opacity: 0.35; fill: none; }
svg.chart .pt { stroke: #fff; stroke-width: 1; } svg.chart .nonfinite { fill: #cf222e; }
.s0 { stroke: #0969da; fill: #0969da; } .s1 { stroke: #bc4c00; fill: #bc4c00; } .s2 { stroke: #1a7f37; fill: #1a7f37; }
.s3 { stroke: #8250df; fill: #8250df; } .s4 { stroke: #bf3989; fill: #bf3989; } .s5 { stroke: #57606a; fill: #57606a; }
svg.chart .line.limit, svg.chart .gap.limit { stroke: #cf222e; }
ul.legend { list-style: none; padding: 0; margin: 2px 0; font-size: 12px; display: flex; flex-wrap: wrap; gap: 12px; }
ul.legend span { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 4px; }
ul.legend .s0 { background: #0969da; } ul.legend .s1 { background: #bc4c00; } ul.legend .s2 { background: #1a7f37; }
ul.legend .s3 { background: #8250df; } ul.legend .s4 { background: #bf3989; } ul.legend .s5 { background: #57606a; }
ul.legend .limit { background: #cf222e; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 12px; }
th, td { border: 1px solid #d1d9e0; padding: 3px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; } th { background: #f6f8fa; }
details summary { cursor: pointer; color: #0969da; font-size: 12px; }
nav ul { columns: 3 320px; font-size: 13px; }
`

// WriteHTML writes the histories as one self-contained page: per key its commits, then
// per kernel its registers, shared memory and spills (a line per arch), then per harness
// kernel × shape its median time with the interval shaded and its max_err against the
// limit. Each chart is an inline <svg class="chart"> with a tooltip on every point and its
// values in a table under it.
func WriteHTML(w io.Writer, hs []History, o PageOptions) error {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + csp + `">` + "\n")
	b.WriteString(`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n")
	b.WriteString("<title>kernel-gate trend</title>\n<style>" + pageStyle + "</style>\n</head>\n<body>\n")
	b.WriteString("<h1>kernel-gate trend</h1>\n<p class=\"note\">")
	entries := 0
	replays := false
	for _, h := range hs {
		entries += len(h.Points)
		for _, p := range h.Points {
			replays = replays || p.Replay != ""
		}
	}
	fmt.Fprintf(&b, "%s of %s", numtext.CountForms(entries, "baseline entry", "baseline entries"), numtext.CountForms(len(hs), "GPU", "GPUs"))
	if o.Source != "" {
		b.WriteString(", from " + esc(o.Source))
	}
	b.WriteString(". Commits run left to right, oldest first, evenly spaced; hover a point for its commit and value. " +
		"A dashed amber line marks a change of driver or CUDA toolkit.</p>\n")
	if replays {
		b.WriteString("<p class=\"replay\">Some entries are <strong>replays</strong> of recorded runs, not live measurements: the commits table says which.</p>\n")
	}
	writeNav(&b, hs)
	for ki, h := range hs {
		writeKey(&b, ki, h)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// anchor is the id of key ki's part p: ids are made here, never from a name.
func anchor(ki int, part string, i int) string {
	return "k" + strconv.Itoa(ki) + "-" + part + strconv.Itoa(i)
}

func writeNav(b *strings.Builder, hs []History) {
	b.WriteString("<nav><ul>\n")
	for ki, h := range hs {
		fmt.Fprintf(b, "<li><a href=\"#%s\">%s</a>: %s, %s, %s</li>\n", anchor(ki, "key", 0), esc(h.Key.String()),
			numtext.CountForms(len(h.Points), "commit", "commits"), numtext.CountForms(len(h.Kernels), "kernel", "kernels"), numtext.CountForms(len(h.Shapes), "kernel × shape", "kernels × shapes"))
	}
	b.WriteString("</ul></nav>\n")
}

func writeKey(b *strings.Builder, ki int, h History) {
	fmt.Fprintf(b, "<section class=\"key\" id=\"%s\">\n<h2>%s</h2>\n", anchor(ki, "key", 0), esc(h.Key.String()))
	writeCommits(b, h)
	if len(h.Kernels) > 0 {
		b.WriteString("<h3>Resources per kernel × arch (PTXAS)</h3>\n")
	}
	for i, k := range h.Kernels {
		fmt.Fprintf(b, "<section class=\"kernel\" id=\"%s\">\n<h4>%s</h4>\n", anchor(ki, "kernel", i), esc(k.Name))
		if k.ID != k.Name {
			fmt.Fprintf(b, "<p class=\"sig\">%s</p>\n", esc(k.ID))
		}
		b.WriteString("<div class=\"grid3\">\n")
		writeFigure(b, k.Name+": registers", "", k.Registers, h.Points, "")
		for _, m := range []Metric{k.Shared, k.Spills} {
			switch {
			case !m.Has():
				writeNote(b, m.Name, "not recorded")
			case m.allZero():
				writeNote(b, m.Name, "none in any of "+numtext.CountForms(len(h.Points), "commit", "commits"))
			default:
				writeFigure(b, k.Name+": "+m.Name, "", m, h.Points, "")
			}
		}
		b.WriteString("</div>\n</section>\n")
	}
	if len(h.Shapes) > 0 {
		b.WriteString("<h3>Time and error per kernel × shape (harness)</h3>\n")
	}
	prev := ""
	for i, s := range h.Shapes {
		group := s.Target + "\x00" + s.Kernel
		if group != prev {
			if prev != "" {
				b.WriteString("</div>\n</section>\n")
			}
			title := esc(s.Kernel)
			if s.Target != "" {
				title += " <span class=\"note\">(target " + esc(s.Target) + ")</span>"
			}
			fmt.Fprintf(b, "<section class=\"shape\" id=\"%s\">\n<h4>%s</h4>\n<div class=\"grid3\">\n", anchor(ki, "shape", i), title)
			prev = group
		}
		if s.Time.Has() {
			writeFigure(b, s.Title()+": median time", "× "+s.Shape+": ", s.Time, h.Points, "95% interval of the median, shaded")
		}
		if s.MaxErr.Has() {
			writeFigure(b, s.Title()+": max_err", "× "+s.Shape+": ", s.MaxErr, h.Points, "")
		}
	}
	if prev != "" {
		b.WriteString("</div>\n</section>\n")
	}
	b.WriteString("</section>\n")
}

// writeCommits is the key's table of points: what each was measured with and why.
func writeCommits(b *strings.Builder, h History) {
	fmt.Fprintf(b, "<details><summary>%s</summary>\n<table>\n", esc("The "+numtext.CountForms(len(h.Points), "commit", "commits")))
	b.WriteString("<tr><th>#</th><th>commit</th><th>date (UTC)</th><th>verdict</th><th>driver</th><th>CUDA</th><th>stored by</th><th>replay</th></tr>\n")
	for i, p := range h.Points {
		by := p.Event
		if p.Reason != "" {
			by += ": " + p.Reason
		}
		switch {
		case p.Tool != "" && by != "":
			by += " (" + p.Tool + ")"
		case p.Tool != "":
			by = p.Tool
		}
		fmt.Fprintf(b, "<tr><td class=\"n\">%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			i+1, esc(p.Commit), esc(p.Date()), esc(string(p.Verdict)), esc(p.Driver), esc(p.CUDA), esc(by), esc(p.Replay))
	}
	b.WriteString("</table>\n</details>\n")
}

func writeNote(b *strings.Builder, what, note string) {
	fmt.Fprintf(b, "<figure><figcaption>%s</figcaption><p class=\"note\">%s</p></figure>\n", esc(what), esc(note))
}

// writeFigure is one chart with its caption (prefix, the metric, its unit, note), legend
// and table; title names the chart for a screen reader. All are plain text.
func writeFigure(b *strings.Builder, title, prefix string, m Metric, pts []Point, note string) {
	caption := prefix + m.Name
	if m.Unit != UnitCount && m.Unit != UnitError {
		caption += " (" + m.Unit + ")"
	}
	b.WriteString("<figure>\n<figcaption>" + esc(caption))
	if note != "" {
		b.WriteString(" <span class=\"note\">" + esc(note) + "</span>")
	}
	b.WriteString("</figcaption>\n")
	writeChart(b, title, m, pts)
	if len(m.Series) > 1 {
		b.WriteString("<ul class=\"legend\">")
		for si, s := range m.Series {
			fmt.Fprintf(b, "<li><span class=\"%s\"></span>%s</li>", seriesClass(si, s), esc(s.Label))
		}
		b.WriteString("</ul>\n")
	}
	writeTable(b, m, pts)
	b.WriteString("</figure>\n")
}

// writeTable is the chart's values, for a reader who cannot see it or wants the numbers.
func writeTable(b *strings.Builder, m Metric, pts []Point) {
	b.WriteString("<details><summary>values</summary>\n<table>\n<tr><th>commit</th><th>date (UTC)</th>")
	for _, s := range m.Series {
		b.WriteString("<th>" + esc(s.Label) + "</th>")
	}
	b.WriteString("</tr>\n")
	for i, p := range pts {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td>", esc(p.Label()), esc(p.Date()))
		for _, s := range m.Series {
			c := ""
			if i < len(s.Values) {
				c = formatValue(m.Unit, s.Values[i])
			}
			b.WriteString("<td class=\"n\">" + esc(c) + "</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</details>\n")
}
