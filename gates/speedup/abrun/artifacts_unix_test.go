//go:build unix

package abrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The harnesses are the pull request's code and know where their artifacts go: a link they
// (or an earlier step) plant there, or a link put in the directory's own place while the
// run goes on, never makes the runner write outside its artifact directory. A link of a
// file's name is refused (the run's error, or no kept copy of a failed run's file); a
// directory moved away keeps getting the run's files.
func TestArtifactsNeverWrittenThroughALink(t *testing.T) {
	for _, tc := range []struct {
		name string
		// plant runs before Run (an earlier step); harness runs in head's harness first.
		plant   func(t *testing.T, art, victim string)
		harness string
		headArg string
		// wantErr: the run ends with a refusal; else a gate, failed when wantFail.
		wantErr, wantFail bool
		// held names where the merged files must be (relative to art's parent).
		held string
	}{
		{name: "the harness log a link before the run", plant: func(t *testing.T, art, victim string) {
			symlink(t, victim, filepath.Join(art, "head-harness.log"))
		}, wantErr: true},
		{name: "the merged file a link the harness planted",
			harness: `[ -L "$ART/head.json" ] || ln -s "$VICTIM" "$ART/head.json";`, wantErr: true},
		{name: "a failed run's kept file a link the harness planted",
			harness: `[ -L "$ART/failed-head-round1.json" ] || ln -s "$VICTIM" "$ART/failed-head-round1.json";`,
			headArg: "bad_on=2", wantFail: true},
		{name: "the directory moved and a link out put in its place",
			harness: `[ -e "$ART.moved" ] || { mv "$ART" "$ART.moved" && ln -s "$OUTSIDE" "$ART"; };`,
			held:    "art.moved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, outside := t.TempDir(), t.TempDir()
			art := filepath.Join(top, "art")
			if err := os.Mkdir(art, 0o755); err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(outside, "victim")
			if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.plant != nil {
				tc.plant(t, art, victim)
			}
			var headArgs []string
			if tc.headArg != "" {
				headArgs = []string{tc.headArg}
			}
			f := newFakes(t, nil, headArgs)
			if tc.harness != "" {
				// sh -c SCRIPT fake-harness.sh ARGS...: the script, then the fake as usual.
				f.head.Argv = append([]string{"sh", "-c", tc.harness + ` exec sh "$0" "$@"`}, f.head.Argv[1:]...)
				f.head.Env = []string{"ART=" + art, "VICTIM=" + victim, "OUTSIDE=" + outside}
			}
			g, err := Run(context.Background(), options(f, art))
			switch {
			case tc.wantErr:
				if err == nil || !errors.Is(err, procgroup.ErrUnsafeArtifact) {
					t.Errorf("got %v (verdict %s), want a refusal of the link", err, g.Verdict)
				}
			case err != nil:
				t.Fatal(err)
			case tc.wantFail:
				d := decodeData(t, g)
				if g.Verdict != result.Fail || d.Runner.Failure == nil || d.Runner.Failure.File != "" {
					t.Errorf("verdict %s, failure %+v: want a failed gate that kept no file through the link", g.Verdict, d.Runner.Failure)
				}
			}
			if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
				t.Errorf("the link's target was written: %q…", raw[:min(len(raw), 60)])
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Errorf("files made outside the artifacts: %v", entries)
			}
			if tc.held != "" {
				for _, name := range []string{"base.json", "head.json", "head-harness.log"} {
					if _, err := os.Lstat(filepath.Join(top, tc.held, name)); err != nil {
						t.Errorf("%s not in the held directory: %v", name, err)
					}
				}
			}
		})
	}
}

// A build's log in the artifacts is never written through a link of its name (the base
// build, run first, could leave one for head's).
func TestBuildLogNeverThroughALink(t *testing.T) {
	art, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, victim, filepath.Join(art, "build-head.log"))
	root, err := os.OpenRoot(art)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fail, err := build(context.Background(), Head, "echo built", tree{dir: t.TempDir()}, 20*time.Second, os.Environ(), root)
	if !errors.Is(err, procgroup.ErrUnsafeArtifact) || fail != nil {
		t.Errorf("got %v, %+v: want the link refused", err, fail)
	}
	if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
		t.Errorf("the link's target was written: %q", raw)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
