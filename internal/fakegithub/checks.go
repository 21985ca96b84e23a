package fakegithub

import (
	"fmt"
	"net/http"
	"slices"
	"time"
)

// checkRunRequest is the body of a check run's create or update; pointers tell a field
// that was sent from one that was not.
type checkRunRequest struct {
	Name        *string        `json:"name"`
	HeadSHA     *string        `json:"head_sha"`
	DetailsURL  *string        `json:"details_url"`
	ExternalID  *string        `json:"external_id"`
	Status      *string        `json:"status"`
	Conclusion  *string        `json:"conclusion"`
	StartedAt   *time.Time     `json:"started_at"`
	CompletedAt *time.Time     `json:"completed_at"`
	Output      *outputRequest `json:"output"`
}

type outputRequest struct {
	Title       *string             `json:"title"`
	Summary     *string             `json:"summary"`
	Text        *string             `json:"text"`
	Annotations []annotationRequest `json:"annotations"`
}

type annotationRequest struct {
	Path            *string `json:"path"`
	StartLine       *int    `json:"start_line"`
	EndLine         *int    `json:"end_line"`
	StartColumn     *int    `json:"start_column"`
	EndColumn       *int    `json:"end_column"`
	AnnotationLevel *string `json:"annotation_level"`
	Message         *string `json:"message"`
	Title           *string `json:"title"`
	RawDetails      *string `json:"raw_details"`
}

// The values GitHub accepts (functions, so that no package state can be changed).
func checkStatuses() []string { return []string{"queued", "in_progress", "completed"} }

func checkConclusions() []string {
	return []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"}
}

func annotationLevels() []string { return []string{"notice", "warning", "failure"} }

// validate checks a create (create true) or update body as GitHub does.
func (b *checkRunRequest) validate(create bool) []fieldError {
	var errs []fieldError
	bad := func(field, code, format string, args ...any) {
		errs = append(errs, fieldError{Resource: "CheckRun", Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if create {
		if b.Name == nil || *b.Name == "" {
			bad("name", "missing_field", "name is required")
		}
		if b.HeadSHA == nil || *b.HeadSHA == "" {
			bad("head_sha", "missing_field", "head_sha is required")
		}
	} else if b.Name != nil && *b.Name == "" {
		bad("name", "invalid", "name can't be blank")
	}
	if b.Status != nil && !slices.Contains(checkStatuses(), *b.Status) {
		bad("status", "invalid", "status %q is not one of %v", *b.Status, checkStatuses())
	}
	if b.Conclusion != nil && !slices.Contains(checkConclusions(), *b.Conclusion) {
		bad("conclusion", "invalid", "conclusion %q is not one of %v", *b.Conclusion, checkConclusions())
	}
	if b.Status != nil && *b.Status == "completed" && b.Conclusion == nil {
		bad("conclusion", "missing_field", "conclusion is required when status is completed")
	}
	if b.Output != nil {
		errs = append(errs, b.Output.validate()...)
	}
	return errs
}

func (o *outputRequest) validate() []fieldError {
	var errs []fieldError
	bad := func(field, code, format string, args ...any) {
		errs = append(errs, fieldError{Resource: "CheckRun", Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
	}
	if o.Title == nil {
		bad("output.title", "missing_field", "output.title is required")
	}
	if o.Summary == nil {
		bad("output.summary", "missing_field", "output.summary is required")
	} else if n := chars(*o.Summary); n > MaxOutputChars {
		bad("output.summary", "custom", "output.summary is too long (%d characters; maximum is %d)", n, MaxOutputChars)
	}
	if o.Text != nil {
		if n := chars(*o.Text); n > MaxOutputChars {
			bad("output.text", "custom", "output.text is too long (%d characters; maximum is %d)", n, MaxOutputChars)
		}
	}
	if n := len(o.Annotations); n > MaxAnnotationsPerRequest {
		bad("output.annotations", "custom", "Only %d annotations are allowed per request, got %d", MaxAnnotationsPerRequest, n)
	}
	for i, a := range o.Annotations {
		field := func(name string) string { return fmt.Sprintf("output.annotations[%d].%s", i, name) }
		if a.Path == nil || *a.Path == "" {
			bad(field("path"), "missing_field", "path is required")
		}
		if a.StartLine == nil {
			bad(field("start_line"), "missing_field", "start_line is required")
		} else if *a.StartLine < 1 {
			bad(field("start_line"), "invalid", "start_line %d must be at least 1", *a.StartLine)
		}
		if a.EndLine == nil {
			bad(field("end_line"), "missing_field", "end_line is required")
		} else if a.StartLine != nil && *a.EndLine < *a.StartLine {
			bad(field("end_line"), "invalid", "end_line %d is before start_line %d", *a.EndLine, *a.StartLine)
		}
		if a.StartColumn != nil || a.EndColumn != nil {
			if a.StartLine == nil || a.EndLine == nil || *a.StartLine != *a.EndLine {
				bad(field("start_column"), "invalid", "start_column and end_column are only allowed when start_line equals end_line")
			}
			if (a.StartColumn != nil && *a.StartColumn < 1) || (a.EndColumn != nil && *a.EndColumn < 1) {
				bad(field("start_column"), "invalid", "columns must be at least 1")
			}
		}
		if a.AnnotationLevel == nil {
			bad(field("annotation_level"), "missing_field", "annotation_level is required")
		} else if !slices.Contains(annotationLevels(), *a.AnnotationLevel) {
			bad(field("annotation_level"), "invalid", "annotation_level %q is not one of %v", *a.AnnotationLevel, annotationLevels())
		}
		if a.Message == nil || *a.Message == "" {
			bad(field("message"), "missing_field", "message is required")
		} else if n := len(*a.Message); n > MaxAnnotationBytes {
			bad(field("message"), "custom", "message is too long (%d bytes; maximum is %d)", n, MaxAnnotationBytes)
		}
		if a.Title != nil {
			if n := chars(*a.Title); n > MaxAnnotationTitleChars {
				bad(field("title"), "custom", "title is too long (%d characters; maximum is %d)", n, MaxAnnotationTitleChars)
			}
		}
		if a.RawDetails != nil {
			if n := len(*a.RawDetails); n > MaxAnnotationBytes {
				bad(field("raw_details"), "custom", "raw_details is too long (%d bytes; maximum is %d)", n, MaxAnnotationBytes)
			}
		}
	}
	return errs
}

func (a annotationRequest) annotation() Annotation {
	return Annotation{
		Path:            deref(a.Path),
		StartLine:       deref(a.StartLine),
		EndLine:         deref(a.EndLine),
		StartColumn:     a.StartColumn,
		EndColumn:       a.EndColumn,
		AnnotationLevel: deref(a.AnnotationLevel),
		Message:         deref(a.Message),
		Title:           deref(a.Title),
		RawDetails:      deref(a.RawDetails),
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// apply sets the fields b sends on c; annotations are appended.
func (c *CheckRun) apply(b *checkRunRequest) {
	if b.Name != nil {
		c.Name = *b.Name
	}
	if b.DetailsURL != nil {
		c.DetailsURL = *b.DetailsURL
	}
	if b.ExternalID != nil {
		c.ExternalID = *b.ExternalID
	}
	if b.Status != nil {
		c.Status = *b.Status
	}
	if b.Conclusion != nil {
		c.Conclusion = *b.Conclusion
		c.Status = "completed" // a conclusion completes the run, as on GitHub
	}
	if b.StartedAt != nil {
		c.StartedAt = *b.StartedAt
	}
	if b.CompletedAt != nil {
		c.CompletedAt = *b.CompletedAt
	}
	if c.Status == "completed" && c.CompletedAt.IsZero() {
		c.CompletedAt = time.Now().UTC()
	}
	if o := b.Output; o != nil {
		c.Title = deref(o.Title)
		c.Summary = deref(o.Summary)
		if o.Text != nil {
			c.Text = *o.Text
		}
		for _, a := range o.Annotations {
			c.Annotations = append(c.Annotations, a.annotation())
		}
	}
}

type checkRunJSON struct {
	ID          int64          `json:"id"`
	NodeID      string         `json:"node_id"`
	Name        string         `json:"name"`
	HeadSHA     string         `json:"head_sha"`
	ExternalID  string         `json:"external_id,omitempty"`
	URL         string         `json:"url"`
	HTMLURL     string         `json:"html_url"`
	DetailsURL  string         `json:"details_url,omitempty"`
	Status      string         `json:"status"`
	Conclusion  *string        `json:"conclusion"`
	StartedAt   *time.Time     `json:"started_at,omitempty"`
	CompletedAt *time.Time     `json:"completed_at,omitempty"`
	Output      checkOutputOut `json:"output"`
	App         *appJSON       `json:"app"`
}

type checkOutputOut struct {
	Title            *string `json:"title"`
	Summary          *string `json:"summary"`
	Text             *string `json:"text"`
	AnnotationsCount int     `json:"annotations_count"`
	AnnotationsURL   string  `json:"annotations_url"`
}

func (c *CheckRun) json(r *http.Request) checkRunJSON {
	api := "http://" + r.Host + "/repos/" + c.Repo + "/check-runs/" + fmt.Sprint(c.ID)
	out := checkRunJSON{
		ID:         c.ID,
		NodeID:     fmt.Sprintf("CR_fake%d", c.ID),
		Name:       c.Name,
		HeadSHA:    c.HeadSHA,
		ExternalID: c.ExternalID,
		URL:        api,
		HTMLURL:    "https://github.com/" + c.Repo + "/runs/" + fmt.Sprint(c.ID),
		DetailsURL: c.DetailsURL,
		Status:     c.Status,
		App:        actionsApp(),
		Output: checkOutputOut{
			AnnotationsCount: len(c.Annotations),
			AnnotationsURL:   api + "/annotations",
		},
	}
	if c.Conclusion != "" {
		out.Conclusion = &c.Conclusion
	}
	if !c.StartedAt.IsZero() {
		out.StartedAt = &c.StartedAt
	}
	if !c.CompletedAt.IsZero() {
		out.CompletedAt = &c.CompletedAt
	}
	if c.Title != "" || c.Summary != "" {
		out.Output.Title, out.Output.Summary = &c.Title, &c.Summary
	}
	if c.Text != "" {
		out.Output.Text = &c.Text
	}
	return out
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request) {
	if !s.appOnly(w) {
		return
	}
	var b checkRunRequest
	if !decode(w, r, &b) {
		return
	}
	if errs := b.validate(true); len(errs) > 0 {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", errs)
		return
	}
	s.mu.Lock()
	c := &CheckRun{ID: s.newID(), Repo: repoOf(r), HeadSHA: *b.HeadSHA, Status: "queued"}
	c.apply(&b)
	if c.StartedAt.IsZero() {
		c.StartedAt = time.Now().UTC()
	}
	s.checkRuns[c.ID] = c
	out := c.json(r)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) getCheckRun(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	s.mu.Lock()
	c, ok := s.checkRuns[id]
	var out checkRunJSON
	if ok && c.Repo == repoOf(r) {
		out = c.json(r)
	}
	s.mu.Unlock()
	if !ok || out.ID == 0 {
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r, "id")
	if !ok {
		return
	}
	var b checkRunRequest
	if !decode(w, r, &b) {
		return
	}
	s.mu.Lock()
	c, ok := s.checkRuns[id]
	if !ok || c.Repo != repoOf(r) {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "Not Found", nil)
		return
	}
	if errs := b.validate(false); len(errs) > 0 {
		s.mu.Unlock()
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed", errs)
		return
	}
	c.apply(&b)
	c.Updates++
	out := c.json(r)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}
