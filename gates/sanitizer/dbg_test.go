package sanitizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDebugDump(t *testing.T) {
	dir := os.Getenv("DBG_DIR")
	if dir == "" {
		t.Skip()
	}
	files, _ := filepath.Glob(dir + "/*")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.HasSuffix(f, ".xml") {
			r, err := ParseXML(strings.NewReader(string(b)), filepath.Base(f))
			fmt.Printf("== %s err=%v\n", filepath.Base(f), err)
			pr(r)
			continue
		}
		runs, err := ParseText(strings.NewReader(string(b)), filepath.Base(f))
		fmt.Printf("== %s err=%v runs=%d\n", filepath.Base(f), err, len(runs))
		for _, r := range runs {
			pr(r)
		}
	}
}

func pr(r Run) {
	ec := "-"
	if r.ExitCode != nil {
		ec = fmt.Sprint(*r.ExitCode)
	}
	fmt.Printf("  tool=%q src=%s sum=%v err=%d warn=%d np=%d exit=%s to=%v launch=%v rr=%s printed=%d\n", r.Tool, r.Source, r.Summary, r.Errors, r.Warnings, r.NotPrinted, ec, r.TimedOut, r.LaunchSeen, r.RacecheckReport, r.Printed())
	for _, rec := range r.Records {
		fmt.Printf("    %s %s %s kernel=%q fn=%q %s:%d t=%s b=%s n=%d hz=%d acc=%q\n", rec.Tool, rec.Kind, rec.Severity, rec.Kernel, displayName(rec.Kernel), rec.File, rec.Line, rec.Thread, rec.Block, rec.Count, rec.Hazards, rec.Access)
	}
	for _, p := range r.Problems {
		fmt.Printf("    PROBLEM %s\n", p)
	}
	for _, p := range r.Notes {
		fmt.Printf("    NOTE %s\n", p)
	}
}
