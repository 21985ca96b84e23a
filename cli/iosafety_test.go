//go:build unix

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// kgCtx runs the command in-process under ctx, with stdin as given, and fails the test
// when it has not returned after d: a command that hangs.
func kgCtx(t *testing.T, ctx context.Context, d time.Duration, stdin io.Reader, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := hangtest.Within(t, d, "kernel-gate "+strings.Join(args, " "), func() int {
		return run(ctx, args, env{stdin: stdin, stdout: &out, stderr: &errb, getenv: func(string) string { return "" }})
	})
	return code, errb.String()
}

// Every command that reads a file refuses, at once and naming it, a FIFO with no writer
// (whose open would block for ever), a device that never ends and a directory: exit 2.
func TestCommandsRefuseInputsThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := hangtest.FIFO(t, filepath.Join(dir, "input.fifo"))
	log := "testdata/replay/clean/attention/sanitize/memcheck.log"
	for _, bad := range []string{fifo, "/dev/zero", dir} {
		for _, args := range [][]string{
			{"ptxas", bad},
			{"ptxas", "--baseline", bad, "testdata/replay/clean/head/attention/compile/2.log"},
			{"ptxas", "--config", bad, "testdata/replay/clean/head/attention/compile/2.log"},
			{"sass", "--sass", bad},
			{"check", bad},
			{"report", bad},
			{"sanitize", "--log", bad},
			{"sanitize", "--tools", "memcheck", "--log", log, "--xml", bad},
			{"sanitize", "--tools", "memcheck", "--log", log, "--harness", bad},
			{"ncu", "--csv", bad},
			{"speedup", "compare", bad, "testdata/sanitizer-kernels-h200/harness_bench_clean.json"},
			{"guard", "--config", bad},
		} {
			code, stderr := kgCtx(t, context.Background(), 10*time.Second, strings.NewReader(""), args...)
			if code != exitUsage || !strings.Contains(stderr, bad) {
				t.Errorf("%q: exit %d, want %d naming %s; stderr: %s", args, code, exitUsage, bad, stderr)
			}
		}
	}
}

// Standard input that never ends stops at SIGINT/SIGTERM (the context main cancels): every
// command that reads "-" returns promptly with exit 2.
func TestCommandsStopReadingStdinOnSignal(t *testing.T) {
	for _, args := range [][]string{
		{"ptxas"},
		{"ptxas", "-"},
		{"sass", "--sass", "-"},
		{"check", "-"},
		{"report", "-"},
		{"sanitize", "--log", "-"},
		{"sanitize", "--xml", "-"},
		{"ncu", "--csv", "-"},
		{"speedup", "compare", "-", "testdata/sanitizer-kernels-h200/harness_bench_clean.json"},
	} {
		pr, pw := io.Pipe()        // a writer that never writes again and never closes
		go pw.Write([]byte("{\n")) // a start every reader waits to see the end of
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		code, stderr := kgCtx(t, ctx, 10*time.Second, pr, args...)
		if code != exitUsage || !strings.Contains(stderr, "stopped before it finished") {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, exitUsage, stderr)
		}
		cancel()
		pw.Close()
	}
}

// An input over its kind's limit is refused, named, with the limit: exit 2.
func TestCommandsRefuseOversizedInputs(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yml")
	os.WriteFile(big, bytes.Repeat([]byte("#\n"), 1<<20), 0o644)
	code, stderr := kgCtx(t, context.Background(), 10*time.Second, nil, "ptxas", "--config", big, "testdata/replay/clean/head/attention/compile/2.log")
	if code != exitUsage || !strings.Contains(stderr, "big.yml holds more than 1 MiB, the limit for a config file") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// --out never overwrites what the command reads, by any name, nor a directory or a FIFO:
// exit 2, and the input is left as it was.
func TestOutNeverOverwritesAnInput(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(src, name string) string {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, raw, 0o644)
		return p
	}
	check := copyFile("testdata/replay/clean/attention/check.json", "check.json")
	build := copyFile("testdata/replay/clean/head/attention/compile/2.log", "build.log")
	cfg := copyFile("kernel-gate.yml", "kernel-gate.yml")
	memlog := copyFile("testdata/replay/clean/attention/sanitize/memcheck.log", "memcheck.log")
	res := filepath.Join(dir, "result.json")
	if code, _, stderr := kg(t, "", "check", check, "--format", "json", "--out", res); code != exitPass {
		t.Fatalf("saving a result: exit %d: %s", code, stderr)
	}
	link := filepath.Join(dir, "link.json")
	os.Symlink(check, link)
	hard := filepath.Join(dir, "hard.json")
	os.Link(check, hard)
	fifo := filepath.Join(dir, "out.fifo")
	syscall.Mkfifo(fifo, 0o600)
	rec := filepath.Join(dir, "rec")
	os.CopyFS(rec, os.DirFS("testdata/replay/clean"))
	inputs := map[string][]byte{}
	for _, p := range []string{check, build, cfg, memlog, res} {
		inputs[p], _ = os.ReadFile(p)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--out", check, check}, "overwrite its own input"},
		{[]string{"check", check, "--out", dir + "/./" + filepath.Base(check)}, "overwrite its own input"},
		{[]string{"check", "--out", link, check}, "overwrite its own input"},
		{[]string{"check", "--out", hard, check}, "overwrite its own input"},
		{[]string{"check", "--config", cfg, "--out", cfg, check}, "overwrite its own input"},
		{[]string{"ptxas", "--out", build, build}, "overwrite its own input"},
		{[]string{"ptxas", "--baseline", res, "--out", res, build}, "overwrite its own input"},
		{[]string{"report", "--out", res, res}, "overwrite its own input"},
		{[]string{"sanitize", "--tools", "memcheck", "--log", memlog, "--out", memlog}, "overwrite its own input"},
		{[]string{"sass", "--sass", build, "--out", build}, "overwrite its own input"},
		{[]string{"run", "--replay", rec, "--out", filepath.Join(rec, "new-report.txt")}, "inside"},
		{[]string{"check", "--out", dir, check}, "is a directory"},
		{[]string{"report", "--out", dir, res}, "is a directory"},
		{[]string{"check", "--out", fifo, check}, "FIFO"},
	} {
		code, stderr := kgCtx(t, context.Background(), 30*time.Second, strings.NewReader(""), tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want %d saying %q; stderr: %s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
	for p, want := range inputs {
		if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
			t.Errorf("%s was overwritten", p)
		}
	}
	if _, err := os.Stat(filepath.Join(rec, "new-report.txt")); err == nil {
		t.Error("a report was written into the recording")
	}
	// Another file is written as before.
	if code, _, stderr := kg(t, "", "check", check, "--out", filepath.Join(dir, "report.txt")); code != exitPass {
		t.Errorf("a fresh --out: exit %d: %s", code, stderr)
	}
}

// sanitize --artifacts and ncu --artifacts write through no link already in the directory
// (to a file outside it, as a planted one would): exit 2, the link's target untouched; a
// stale regular file of an earlier run is replaced.
func TestArtifactsNeverFollowALink(t *testing.T) {
	cs, _ := filepath.Abs("testdata/fakegpu/compute-sanitizer")
	harness, _ := filepath.Abs("testdata/fakegpu/harness.sh")
	victim := filepath.Join(t.TempDir(), "victim")
	for _, name := range []string{"memcheck.log", "memcheck.xml", "harness-memcheck.json"} {
		os.WriteFile(victim, []byte("precious\n"), 0o644)
		art := t.TempDir()
		os.Symlink(victim, filepath.Join(art, name))
		code, _, stderr := kg(t, "", "sanitize", "--tools", "memcheck", "--sanitizer", cs, "--artifacts", art, "--", "sh", harness)
		if code != exitUsage || !strings.Contains(stderr, name) {
			t.Errorf("sanitize, %s a link: exit %d: %s", name, code, stderr)
		}
		if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
			t.Errorf("sanitize wrote through the link %s: %q", name, raw)
		}
	}
	art := t.TempDir()
	for range 2 { // the second run finds the first one's files
		if code, _, stderr := kg(t, "", "sanitize", "--tools", "memcheck", "--sanitizer", cs, "--artifacts", art, "--", "sh", harness); code != exitPass {
			t.Fatalf("sanitize into %s: exit %d: %s", art, code, stderr)
		}
	}

	metrics, _ := filepath.Abs(ncuMetrics)
	fakeNCUOnPath(t, "cat "+metrics+"\n")
	for _, name := range []string{"ncu.log", "harness-ncu.json"} {
		os.WriteFile(victim, []byte("precious\n"), 0o644)
		art := t.TempDir()
		os.Symlink(victim, filepath.Join(art, name))
		code, _, stderr := kg(t, "", "ncu", "--config", "kernel-gate.yml", "--artifacts", art, "--", "./build/harness")
		if code != exitUsage || !strings.Contains(stderr, name) {
			t.Errorf("ncu, %s a link: exit %d: %s", name, code, stderr)
		}
		if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
			t.Errorf("ncu wrote through the link %s: %q", name, raw)
		}
	}
	art = t.TempDir()
	for range 2 {
		if code, _, stderr := kg(t, "", "ncu", "--config", "kernel-gate.yml", "--artifacts", art, "--", "./build/harness"); code == exitUsage || code == exitInternal {
			t.Fatalf("ncu into %s: exit %d: %s", art, code, stderr)
		}
	}
}

// run --replay of a recording with a link out of it (to the environment's secrets) is
// refused, naming the link and printing nothing it leads to.
func TestReplayRefusesALinkOut(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	os.CopyFS(rec, os.DirFS("testdata/replay/clean"))
	os.Remove(filepath.Join(rec, "gpu.csv"))
	os.Symlink("/proc/self/environ", filepath.Join(rec, "gpu.csv"))
	t.Setenv("KG_TEST_SECRET", "hunter2")
	code, out, stderr := kg(t, "", "run", "--replay", rec)
	if code != exitUsage || !strings.Contains(stderr, "gpu.csv") || strings.Contains(out+stderr, "hunter2") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
}

// --out that is a symbolic link leading out of its directory (a workspace file the pull
// request committed as a link to ~/.bashrc), dangling or not, is refused by every command
// that writes a report: exit 2, its target neither overwritten nor created. A link to a
// file in the same directory is written through.
func TestOutRefusesALinkOutOfItsDirectory(t *testing.T) {
	check := "testdata/replay/clean/attention/check.json"
	res := "testdata/replay/clean/result.json"
	store := t.TempDir()
	if code, _, stderr := kg(t, "", "baseline", "update", "--store", store, "--commit", "0123456789abcdef", res); code != exitPass {
		t.Fatalf("filling the store: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"check", check},
		{"report", res},
		{"merge", res},
		{"baseline", "show", "--store", store},
		{"trend", "--store", store},
		{"demo", "--trend"},
	} {
		dir, outside := t.TempDir(), t.TempDir()
		victim := filepath.Join(outside, ".bashrc")
		os.WriteFile(victim, []byte("precious\n"), 0o644)
		os.Symlink(victim, filepath.Join(dir, "abs.json"))
		rel, _ := filepath.Rel(dir, victim)
		os.Symlink(rel, filepath.Join(dir, "rel.json"))
		os.Symlink(filepath.Join(outside, "authorized_keys"), filepath.Join(dir, "dangling.json"))
		for _, link := range []string{"abs.json", "rel.json", "dangling.json"} {
			a := append(slices.Clone(args), "--out", filepath.Join(dir, link))
			code, stderr := kgCtx(t, context.Background(), 30*time.Second, strings.NewReader(""), a...)
			if code != exitUsage || !strings.Contains(stderr, "leads out of its directory") {
				t.Errorf("%q: exit %d, want %d; stderr: %s", a, code, exitUsage, stderr)
			}
		}
		if raw, _ := os.ReadFile(victim); string(raw) != "precious\n" {
			t.Errorf("%q wrote through a link: %q", args, raw)
		}
		if _, err := os.Lstat(filepath.Join(outside, "authorized_keys")); err == nil {
			t.Errorf("%q created a dangling link's target", args)
		}
		real := filepath.Join(dir, "report.out")
		os.WriteFile(real, nil, 0o644)
		os.Symlink("report.out", filepath.Join(dir, "inner.json"))
		a := append(slices.Clone(args), "--out", filepath.Join(dir, "inner.json"))
		if code, stderr := kgCtx(t, context.Background(), 30*time.Second, strings.NewReader(""), a...); code == exitUsage || code == exitInternal {
			t.Errorf("%q: exit %d: %s", a, code, stderr)
		}
		if st, err := os.Stat(real); err != nil || st.Size() == 0 {
			t.Errorf("%q: nothing written through a link inside the directory", a)
		}
	}
}

// Inside GitHub Actions a single command's --out (action.yml passes results-file) lies in
// the pull request's workspace, which can commit a directory link anywhere on the path
// (out -> ~/.ssh): no directory on it may lead out of the workspace, only its final name
// being checked let `out/kg.json` write into the link's target.
func TestOutNeverThroughADirectoryLinkedOutOfTheWorkspace(t *testing.T) {
	res := absPath(t, "testdata/replay/clean/result.json")
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(ws, "real"), 0o755)
	for _, tc := range []struct {
		out  string
		code int
	}{
		{filepath.Join(ws, "out", "kg.json"), exitUsage},
		{filepath.Join("out", "kg.json"), exitUsage},
		{filepath.Join("..", filepath.Base(outside), "kg.json"), exitUsage},
		{filepath.Join(ws, "real", "kg.json"), exitPass},
	} {
		t.Run(tc.out, func(t *testing.T) {
			t.Chdir(ws)
			vars := map[string]string{"GITHUB_WORKSPACE": ws}
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"report", res, "--format", "json", "--out", tc.out}, env{
				stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }})
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, errb.String())
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 0 {
				t.Errorf("written outside the workspace through a link: %v", entries)
			}
		})
	}
}
