package githubapi

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	github "github.com/google/go-github/v60/github"
)

// GitHub's limits on check runs. Text is cut to them counting bytes, so that a limit in
// characters holds too.
const (
	// MaxAnnotationsPerRequest is how many annotations GitHub takes in one request;
	// more go in successive updates.
	MaxAnnotationsPerRequest = 50
	// MaxOutputBytes bounds a check run's summary and text (GitHub: 65,535 characters).
	MaxOutputBytes = 65535
	// MaxAnnotationBytes bounds an annotation's message and raw details (64 KiB).
	MaxAnnotationBytes = 64 * 1024
	// MaxAnnotationTitleBytes bounds an annotation's title (GitHub: 255 characters).
	MaxAnnotationTitleBytes = 255
)

// Annotation levels.
const (
	LevelFailure = "failure"
	LevelWarning = "warning"
	LevelNotice  = "notice"
)

// Conclusions CompleteCheck takes.
const (
	ConclusionSuccess = "success"
	ConclusionFailure = "failure"
	ConclusionNeutral = "neutral"
)

// Output is what a check run shows: a title, a markdown summary and text, and
// annotations on lines of the change.
type Output struct {
	// Title defaults to the check run's name, Summary to the title (GitHub needs both).
	Title   string
	Summary string
	Text    string
	// Annotations are posted in the order given, MaxAnnotationsPerRequest at a time.
	Annotations []Annotation
}

func (o Output) empty() bool {
	return o.Title == "" && o.Summary == "" && o.Text == "" && len(o.Annotations) == 0
}

// Annotation is a message on lines of a file. Path is relative to the repository root;
// lines and columns are 1-based; EndLine 0 means StartLine. Columns (EndColumn 0 means
// StartColumn) are sent only when the annotation is on one line: GitHub refuses them
// otherwise.
type Annotation struct {
	Path        string
	StartLine   int
	EndLine     int
	StartColumn int
	EndColumn   int
	// Level is LevelFailure, LevelWarning or LevelNotice.
	Level      string
	Title      string
	Message    string
	RawDetails string
}

// Validate says why GitHub would refuse the annotation, or returns nil.
func (a Annotation) Validate() error {
	switch {
	case a.Path == "":
		return errors.New("no path")
	case strings.ContainsRune(a.Path, 0):
		return fmt.Errorf("path %q has a NUL byte", a.Path)
	case strings.HasPrefix(a.Path, "/") || strings.HasPrefix(a.Path, `\`) || hasDrive(a.Path):
		return fmt.Errorf("path %q is absolute: GitHub wants it relative to the repository root", a.Path)
	case hasDotDot(a.Path):
		return fmt.Errorf("path %q has a .. element", a.Path)
	case path.Clean(a.Path) == ".":
		return fmt.Errorf("path %q names no file", a.Path)
	case a.StartLine < 1:
		return fmt.Errorf("start line %d: GitHub needs a line of at least 1", a.StartLine)
	case a.EndLine != 0 && a.EndLine < a.StartLine:
		return fmt.Errorf("end line %d is before start line %d", a.EndLine, a.StartLine)
	case a.Level != LevelFailure && a.Level != LevelWarning && a.Level != LevelNotice:
		return fmt.Errorf("level %q is not failure, warning or notice", a.Level)
	case a.Message == "":
		return errors.New("no message")
	}
	return nil
}

func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

func hasDotDot(p string) bool {
	for _, el := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if el == ".." {
			return true
		}
	}
	return false
}

// Posted says what an update sent, so that the caller can report what GitHub will not
// show. With an error it counts what was sent before the error.
type Posted struct {
	// Annotations is how many annotations GitHub accepted.
	Annotations int
	// Dropped is how many were not sent because GitHub would refuse them (Validate);
	// Log names the reasons.
	Dropped int
	// Cut is how many texts (summary, text, an annotation's title, message or raw
	// details) were cut to GitHub's limits, each ending with a note saying so.
	Cut int
}

// StartCheck creates an in_progress check run on headSHA and returns its id.
// detailsURL (may be empty) is where "Details" leads, e.g. the workflow run.
func (c *Client) StartCheck(ctx context.Context, name, headSHA, detailsURL string) (int64, error) {
	const what = "creating the check run"
	if name == "" {
		return 0, fmt.Errorf("githubapi: %s: the check run needs a name", what)
	}
	if headSHA == "" {
		return 0, fmt.Errorf("githubapi: %s %q: no head commit SHA", what, name)
	}
	opts := github.CreateCheckRunOptions{
		Name:      name,
		HeadSHA:   headSHA,
		Status:    github.String("in_progress"),
		StartedAt: &github.Timestamp{Time: time.Now().UTC()},
	}
	if detailsURL != "" {
		opts.DetailsURL = &detailsURL
	}
	var id int64
	var app *github.App
	err := c.retry(ctx, newOp(what), func(ctx context.Context, gh *github.Client) (string, *github.Response, error) {
		run, resp, err := gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
		if err == nil && run.GetID() == 0 {
			err = errors.New("GitHub's answer has no check run id")
		}
		id, app = run.GetID(), run.GetApp()
		return what, resp, err
	})
	if err != nil {
		return 0, err
	}
	// The run is the token's app's: its bot is who the token's comments are by.
	c.learnApp(app, id)
	c.namesMu.Lock()
	c.names[id] = name
	c.namesMu.Unlock()
	return id, nil
}

// UpdateCheck sets the check run's title, summary and text and adds its annotations,
// MaxAnnotationsPerRequest per request. Invalid annotations are dropped and texts over
// GitHub's limits cut (Posted counts both). An empty Output sends nothing.
func (c *Client) UpdateCheck(ctx context.Context, id int64, out Output) (Posted, error) {
	return c.update(ctx, id, "", out)
}

// CompleteCheck posts out as UpdateCheck does and completes the check run with
// conclusion: ConclusionSuccess, ConclusionFailure or ConclusionNeutral. The conclusion
// goes with the last batch of annotations, so that a run is complete only with all of
// them. An empty Output completes the run and leaves its output as it was.
func (c *Client) CompleteCheck(ctx context.Context, id int64, conclusion string, out Output) (Posted, error) {
	switch conclusion {
	case ConclusionSuccess, ConclusionFailure, ConclusionNeutral:
	default:
		return Posted{}, fmt.Errorf("githubapi: completing check run %d: conclusion %q is not success, failure or neutral", id, conclusion)
	}
	return c.update(ctx, id, conclusion, out)
}

func (c *Client) update(ctx context.Context, id int64, conclusion string, out Output) (Posted, error) {
	var posted Posted
	if id <= 0 {
		return posted, fmt.Errorf("githubapi: updating check run %d: not a check run id", id)
	}
	if conclusion == "" && out.empty() {
		return posted, nil
	}
	o := newOp(fmt.Sprintf("updating check run %d", id))
	name, err := c.checkName(ctx, o, id)
	if err != nil {
		return posted, err
	}
	var cuts []string
	anns := c.annotations(out.Annotations, &posted, &cuts)
	var output *github.CheckRunOutput
	if !out.empty() {
		title := out.Title
		if title == "" {
			title = name
		}
		summary := out.Summary
		if summary == "" {
			summary = title
		}
		summary = cutNoted(summary, MaxOutputBytes, "summary", markdownNote, &posted, &cuts)
		output = &github.CheckRunOutput{Title: &title, Summary: &summary}
		if out.Text != "" {
			text := cutNoted(out.Text, MaxOutputBytes, "text", markdownNote, &posted, &cuts)
			output.Text = &text
		}
	}
	if len(cuts) > 0 {
		c.logf("githubapi: check run %d: cut to GitHub's limits, each with a note: %s", id, listSome(cuts, 3))
	}
	batches := chunk(anns, MaxAnnotationsPerRequest)
	for i, batch := range batches {
		opts := github.UpdateCheckRunOptions{Name: name}
		if output != nil {
			o := *output
			o.Annotations = batch
			opts.Output = &o
		}
		last := i == len(batches)-1
		what := fmt.Sprintf("updating check run %d", id)
		if last && conclusion != "" {
			opts.Status = github.String("completed")
			opts.Conclusion = &conclusion
			opts.CompletedAt = &github.Timestamp{Time: time.Now().UTC()}
			what = fmt.Sprintf("completing check run %d", id)
		}
		if len(batches) > 1 {
			from := i * MaxAnnotationsPerRequest
			what += fmt.Sprintf(" with annotations %d-%d of %d", from+1, from+len(batch), len(anns))
		}
		err := c.retry(ctx, o, func(ctx context.Context, gh *github.Client) (string, *github.Response, error) {
			_, resp, err := gh.Checks.UpdateCheckRun(ctx, c.owner, c.repo, id, opts)
			return what, resp, err
		})
		if err != nil {
			return posted, err
		}
		posted.Annotations += len(batch)
	}
	return posted, nil
}

// checkName is the name of check run id: every update must repeat it (go-github always
// sends one). A run this Client did not start is asked for it.
func (c *Client) checkName(ctx context.Context, o *op, id int64) (string, error) {
	c.namesMu.Lock()
	name, ok := c.names[id]
	c.namesMu.Unlock()
	if ok {
		return name, nil
	}
	what := fmt.Sprintf("reading check run %d", id)
	err := c.retry(ctx, o, func(ctx context.Context, gh *github.Client) (string, *github.Response, error) {
		run, resp, err := gh.Checks.GetCheckRun(ctx, c.owner, c.repo, id)
		name = run.GetName()
		if err == nil && name == "" {
			err = errors.New("GitHub's answer has no check run name")
		}
		return what, resp, err
	})
	if err != nil {
		return "", err
	}
	c.namesMu.Lock()
	c.names[id] = name
	c.namesMu.Unlock()
	return name, nil
}

// annotations converts the valid ones to go-github's, in order, counting and logging
// the dropped ones.
func (c *Client) annotations(in []Annotation, posted *Posted, cuts *[]string) []*github.CheckRunAnnotation {
	out := make([]*github.CheckRunAnnotation, 0, len(in))
	var reasons []string
	for i, a := range in {
		if err := a.Validate(); err != nil {
			posted.Dropped++
			reasons = append(reasons, fmt.Sprintf("annotation %d (%s:%d): %v", i+1, a.Path, a.StartLine, err))
			continue
		}
		out = append(out, a.wire(i+1, posted, cuts))
	}
	if len(reasons) > 0 {
		c.logf("githubapi: dropped %d of %d annotations GitHub would refuse: %s", len(reasons), len(in), listSome(reasons, 3))
	}
	return out
}

func (a Annotation) wire(n int, posted *Posted, cuts *[]string) *github.CheckRunAnnotation {
	p := path.Clean(a.Path)
	start, end := a.StartLine, a.EndLine
	if end == 0 {
		end = start
	}
	level := a.Level
	label := fmt.Sprintf("annotation %d's ", n)
	msg := cutNoted(a.Message, MaxAnnotationBytes, label+"message", plainNote, posted, cuts)
	w := &github.CheckRunAnnotation{
		Path:            &p,
		StartLine:       &start,
		EndLine:         &end,
		AnnotationLevel: &level,
		Message:         &msg,
	}
	if start == end && a.StartColumn >= 1 {
		sc, ec := a.StartColumn, a.EndColumn
		if ec < sc {
			ec = sc
		}
		w.StartColumn, w.EndColumn = &sc, &ec
	}
	if a.Title != "" {
		title := cutNoted(a.Title, MaxAnnotationTitleBytes, label+"title", titleNote, posted, cuts)
		w.Title = &title
	}
	if a.RawDetails != "" {
		raw := cutNoted(a.RawDetails, MaxAnnotationBytes, label+"raw details", plainNote, posted, cuts)
		w.RawDetails = &raw
	}
	return w
}

func chunk[T any](s []T, n int) [][]T {
	if len(s) == 0 {
		return [][]T{nil}
	}
	var out [][]T
	for len(s) > n {
		out = append(out, s[:n:n])
		s = s[n:]
	}
	return append(out, s)
}

func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:n], "; "), len(items)-n)
}

// Notes that end a cut text; %d is the length of the whole text in bytes.
const (
	markdownNote = "\n\n---\n*Cut by kernel-gate: GitHub allows %d characters here; the whole text is %d bytes.*\n"
	plainNote    = "\n[cut by kernel-gate: GitHub allows %d bytes here; the whole text is %d bytes]"
	titleNote    = " [cut]"
)

// cutNoted cuts s to at most limit bytes, on a rune boundary, ending with note (the
// note included within the limit), and records the cut.
func cutNoted(s string, limit int, label, note string, posted *Posted, cuts *[]string) string {
	if len(s) <= limit {
		return s
	}
	if strings.Contains(note, "%d") {
		note = fmt.Sprintf(note, limit, len(s))
	}
	posted.Cut++
	*cuts = append(*cuts, fmt.Sprintf("%s (%d bytes)", label, len(s)))
	return cut(s, limit, note)
}

// cut returns s if it fits in limit bytes, else its longest prefix that ends on a rune
// boundary and leaves room for note, followed by note.
func cut(s string, limit int, note string) string {
	if len(s) <= limit {
		return s
	}
	keep := limit - len(note)
	if keep < 0 {
		note, keep = "", limit
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + note
}
