//go:build unix

package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The SASS dumps by cubins (sassdump.go), on the fake toolchain: its cuobjdump lists and
// extracts the cubins of testdata/cuda11.8-cpu (real CUDA 11.8 output of kernels/softmax.cu
// and gemm_wmma.cu for sm_89 and sm_90), its nvdisasm (testdata/fakegpu/disasm) prints
// each one's real nvdisasm -c -hex output, and its cuobjdump --dump-sass the same binary's
// real dump.

// cuda118 is testdata/cuda11.8-cpu, absolute.
func cuda118(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(root, "testdata", "cuda11.8-cpu"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// fakeNvdisasm is the fake nvdisasm, absolute.
func fakeNvdisasm(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(root, "testdata", "fakegpu", "disasm", "nvdisasm"))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// cubinsConfig is the example config with sass rules for the functions of
// testdata/cuda11.8-cpu's binary.
func cubinsConfig(t *testing.T) config.Config {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i, j := strings.Index(text, "\nsass:\n"), strings.Index(text, "\ncorrectness:\n")
	if i < 0 || j < i {
		t.Fatal("kernel-gate.yml has no sass section before correctness")
	}
	text = text[:i] + `
sass:
  kernels:
    - match: "gemm_wmma<*>"
      require: ["HMMA|HGMMA"]
    - match: "row_softmax<*>"
      forbid: ["DADD|DMUL|DFMA"]
` + text[j:]
	cfg, err := config.Parse([]byte(text), filepath.Join(root, "kernel-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// cubinsRun runs base and head live on the fake toolchain with the cubins of cubinsDir
// (testdata/cuda11.8-cpu when ""), nvdisasm as given ("" for none), the sass gate only.
func cubinsRun(t *testing.T, cubinsDir, nvdisasm string, o Options, env ...string) (result.Result, string) {
	t.Helper()
	if cubinsDir == "" {
		cubinsDir = cuda118(t)
	}
	art := filepath.Join(t.TempDir(), "art")
	o.Dir, o.BaseRef, o.Artifacts, o.Gates, o.Tools.Nvdisasm = gitRepo(t), "main", art, []string{"sass"}, nvdisasm
	env = append(env, "FAKE_CUBINS="+cubinsDir, "FAKE_SASS="+filepath.Join(cuda118(t), "cuobjdump-sass.txt.gz"))
	var progress bytes.Buffer
	o.Progress = &progress
	res, err := liveRunConfig(t, cubinsConfig(t), o, "", env...)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(art, "progress.txt"), progress.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return res, art
}

// replayed replays a recording with the sass gate and the config of cubinsRun.
func replayed(t *testing.T, art string) result.Result {
	t.Helper()
	res, err := Run(context.Background(), cubinsConfig(t), Options{Replay: art, Tool: "kernel-gate test", Gates: []string{"sass"}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// functionMix is the sass gate's data: each function × arch with its instructions and mix.
func functionMix(t *testing.T, g result.Gate) map[string]string {
	t.Helper()
	d, err := sass.ReadData(g.Data)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range d.Functions {
		mix := []string{strconv.Itoa(f.Instructions)}
		for _, c := range slices.Sorted(maps.Keys(f.Mix)) {
			mix = append(mix, string(c)+"="+strconv.Itoa(f.Mix[c]))
		}
		out[f.Arch+" "+f.Name] = strings.Join(mix, " ")
	}
	return out
}

func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// With nvdisasm, each side's binary is listed, its cubins extracted into a directory of
// their own and each disassembled by its own step, base's and head's at once; sass.txt is
// their outputs in the listing's order; the directory is gone once they were read, and
// commands.sh makes it again. The sass gate reads the same functions × archs and mix as
// from cuobjdump --dump-sass of the same binary (a run without nvdisasm, which says why),
// and the recording replays to the same result.
func TestSASSByCubins(t *testing.T) {
	res, art := cubinsRun(t, "", fakeNvdisasm(t), Options{})
	g := gate(t, res, "sass")
	if g.Verdict != result.Pass {
		t.Fatalf("sass %s:\n%s", g.Verdict, findings(g))
	}
	listed := []string{"softmax-gemm_wmma.sm_89.cubin", "softmax-gemm_wmma.sm_90.cubin", "softmax.sm_89.cubin", "softmax.sm_90.cubin", "gemm_wmma.sm_89.cubin", "gemm_wmma.sm_90.cubin"}
	j := readJournal(t, art)
	ids := map[string]step{}
	for _, s := range j.Steps {
		ids[s.ID] = s
	}
	var concat []byte
	for i, name := range listed {
		concat = append(concat, gunzipFile(t, filepath.Join(cuda118(t), "nvdisasm", name+".txt.gz"))...)
		for _, side := range []string{"base", "head"} {
			s, ok := ids["sass/"+side+"/attention/"+strconv.Itoa(i+1)]
			want := []string{fakeNvdisasm(t), "-c", "-hex", filepath.Join(art, side, "attention", "cubins", name)}
			if !ok || !slices.Equal(s.Argv, want) || !s.Parallel || s.Log != side+"/attention/sass/"+strconv.Itoa(i+1)+".txt" {
				t.Errorf("%s's cubin %d: %+v (found %v), want argv %q, parallel", side, i+1, s, ok, want)
			}
		}
	}
	for _, side := range []string{"base", "head"} {
		if _, ok := ids["sass/"+side+"/attention"]; ok {
			t.Errorf("%s was dumped by cuobjdump --dump-sass too", side)
		}
		x := ids["xelf/"+side+"/attention"]
		if x.Dir != filepath.Join(art, side, "attention", "cubins") || !slices.Equal(x.Argv[1:], []string{"-xelf", "all", ids["elf/"+side+"/attention"].Argv[2]}) || !x.Parallel {
			t.Errorf("%s's extraction: %+v", side, x)
		}
		got, err := os.ReadFile(filepath.Join(art, side, "attention", "sass.txt"))
		if err != nil || !bytes.Equal(got, concat) {
			t.Errorf("%s's sass.txt is not the cubins' outputs in the listing's order (%v)", side, err)
		}
		if _, err := os.Lstat(filepath.Join(art, side, "attention", "cubins")); !os.IsNotExist(err) {
			t.Errorf("%s's cubins are left in the artifacts (%v)", side, err)
		}
		if _, err := os.Stat(filepath.Join(art, side, "attention", "cubins.json")); err != nil {
			t.Errorf("%s: %v", side, err)
		}
	}
	if !slices.ContainsFunc(res.Stages, func(s result.Stage) bool { return s.Name == "nvdisasm" }) {
		t.Errorf("no nvdisasm stage: %+v", res.Stages)
	}
	sh, err := os.ReadFile(filepath.Join(art, scriptFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := procgroup.ShellQuote(filepath.Join(art, "head", "attention", "cubins"))
	xelf := "(mkdir -p " + dir + " && cd " + dir + " && " + procgroup.ShellJoin(ids["xelf/head/attention"].Argv) + " >"
	nvdisasm := "(" + procgroup.ShellJoin(ids["sass/head/attention/6"].Argv) + " >"
	if i, k := strings.Index(string(sh), xelf), strings.Index(string(sh), nvdisasm); i < 0 || k < i || !strings.Contains(string(sh)[i:k], "wait\n") {
		t.Errorf("commands.sh does not make the directory, extract, wait, then disassemble:\n%s", sh)
	}
	// And it runs: each cubin's output again, as the run kept it.
	plain := exec.Command("sh", filepath.Join(art, scriptFile))
	plain.Env = append(os.Environ(), "FAKE_CUBINS="+cuda118(t)) // as the run had it
	if out, err := plain.CombinedOutput(); err != nil {
		t.Fatalf("commands.sh: %v\n%s", err, out)
	}
	for i := range listed {
		log := filepath.Join(art, "head", "attention", "sass", strconv.Itoa(i+1)+".txt")
		kept, _ := os.ReadFile(log)
		again, err := os.ReadFile(log + ".plain")
		if err != nil || !bytes.Equal(kept, again) || len(kept) == 0 {
			t.Errorf("commands.sh's %s differs from the run's (%v)", log, err)
		}
	}
	// The same binary dumped by cuobjdump, where there is no nvdisasm.
	whole, wart := cubinsRun(t, "", "", Options{})
	if p, _ := os.ReadFile(filepath.Join(wart, "progress.txt")); !strings.Contains(string(p), "SASS dumps by cuobjdump --dump-sass, whole, not by cubins with nvdisasm (faster): no nvdisasm beside") {
		t.Errorf("the progress does not say why there is no nvdisasm:\n%s", p)
	}
	wj := readJournal(t, wart)
	if s := stepOf(t, &wj, "sass/head/attention"); s.Argv[1] != "--dump-sass" {
		t.Errorf("no cuobjdump --dump-sass: %+v", s)
	}
	if wg := gate(t, whole, "sass"); wg.Verdict != g.Verdict || !maps.Equal(functionMix(t, wg), functionMix(t, g)) || len(functionMix(t, g)) != 4 {
		t.Errorf("by cubins %s %v\nwhole %s %v", g.Verdict, functionMix(t, g), wg.Verdict, functionMix(t, wg))
	}
	again := gate(t, replayed(t, art), "sass")
	if again.Verdict != g.Verdict || findings(again) != findings(g) || !bytes.Equal(again.Data, g.Data) {
		t.Errorf("replayed %s:\n%s\nlive %s:\n%s", again.Verdict, findings(again), g.Verdict, findings(g))
	}
}

// Whatever goes wrong with a binary's cubins fails the sass gate naming it, never a part
// of the SASS judged as the whole: a name that could leave the extraction directory, an
// extraction that fails, a cubin missing, a file not listed, a link or a directory in its
// place, nvdisasm failing on one cubin, a dump cut at the log cap. The recording replays to
// the same findings.
func TestSASSByCubinsFailsClosed(t *testing.T) {
	listing := func(t *testing.T, names ...string) string {
		dir := t.TempDir()
		var b strings.Builder
		for i, n := range names {
			b.WriteString("ELF file " + strconv.Itoa(i+1) + ": " + n + "\n")
		}
		if err := os.WriteFile(filepath.Join(dir, "list-elf.txt"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		env  []string
		cap  int
		want string
		xelf bool // the extraction ran
	}{
		{"a path in a name", func(t *testing.T) string { return listing(t, "softmax.sm_89.cubin", "../up.sm_90.cubin") }, nil, 0,
			`cuobjdump --list-elf names a cubin "../up.sm_90.cubin", which holds a path separator: refusing to extract it`, false},
		{"dots in a name", func(t *testing.T) string { return listing(t, "..sm_90.cubin") }, nil, 0, `"..sm_90.cubin", which holds ".."`, false},
		{"an option as a name", func(t *testing.T) string { return listing(t, "-o.sm_90.cubin") }, nil, 0, `"-o.sm_90.cubin", which starts with "-"`, false},
		{"extraction fails", nil, []string{"FAKE_XELF=fail"}, 0, "cuobjdump -xelf all: `", true},
		{"a cubin missing", nil, []string{"FAKE_XELF=missing"}, 0, `"gemm_wmma.sm_90.cubin", which --list-elf lists, was not extracted`, true},
		{"a file more", nil, []string{"FAKE_XELF=extra"}, 0, `it holds "extra.sm_90.cubin", which --list-elf does not list`, true},
		{"a link", nil, []string{"FAKE_XELF=symlink"}, 0, `"softmax-gemm_wmma.sm_89.cubin" is a symbolic link, not a regular file`, true},
		{"a directory", nil, []string{"FAKE_XELF=dir"}, 0, `"softmax-gemm_wmma.sm_89.cubin" is a directory, not a regular file`, true},
		{"nvdisasm fails on one", nil, []string{"FAKE_NVDISASM_FAIL=softmax.sm_90.cubin"}, 0, `nvdisasm of its cubin "softmax.sm_90.cubin": ` + "`", true},
		// Cut at its own cap or at the binary's (its cubins' logs keep one cap together):
		// which, and which cubin the finding names first, is the order they ran in.
		{"a dump cut", nil, nil, 64 << 10, `printed more than the 64 KiB`, true},
		// testdata/cuda11.8-crafted: a cubin whose one kernel's code nvdisasm prints in a
		// section not named .text.NAME is not a cubin without code.
		{"code outside any function", func(t *testing.T) string {
			dir := listing(t, "softmax.sm_89.cubin", "gemm_wmma.sm_89.cubin", "dk.sm_89.cubin")
			os.Mkdir(filepath.Join(dir, "nvdisasm"), 0o755)
			for _, name := range []string{"softmax.sm_89.cubin", "gemm_wmma.sm_89.cubin"} {
				os.Symlink(filepath.Join(cuda118(t), "nvdisasm", name+".txt.gz"), filepath.Join(dir, "nvdisasm", name+".txt.gz"))
			}
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			raw, err := os.ReadFile(filepath.Join(root, "testdata", "cuda11.8-crafted", "nvdisasm-renamed-dk.txt"))
			if err != nil {
				t.Fatal(err)
			}
			zw.Write(raw)
			zw.Close()
			if err := os.WriteFile(filepath.Join(dir, "nvdisasm", "dk.sm_89.cubin.txt.gz"), gz.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			return dir
		}, nil, 0, `nvdisasm of its cubin "dk.sm_89.cubin": `, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ""
			if tc.dir != nil {
				dir = tc.dir(t)
			}
			res, art := cubinsRun(t, dir, fakeNvdisasm(t), Options{LogCap: tc.cap}, tc.env...)
			g := gate(t, res, "sass")
			if g.Verdict != result.Fail || !strings.Contains(findings(g), "error: attention: ") || !strings.Contains(findings(g), tc.want) {
				t.Fatalf("sass %s, want a failure with %q:\n%s", g.Verdict, tc.want, findings(g))
			}
			j := readJournal(t, art)
			if has := slices.ContainsFunc(j.Steps, func(s step) bool { return s.ID == "xelf/head/attention" }); has != tc.xelf {
				t.Errorf("extraction ran: %v, want %v", has, tc.xelf)
			}
			if slices.ContainsFunc(j.Steps, func(s step) bool { return s.ID == "sass/head/attention" }) {
				t.Error("dumped whole by cuobjdump instead")
			}
			if _, err := os.Lstat(filepath.Join(art, "head", "attention", "cubins")); !os.IsNotExist(err) {
				t.Errorf("the cubins are left in the artifacts (%v)", err)
			}
			again := gate(t, replayed(t, art), "sass")
			if again.Verdict != g.Verdict || findings(again) != findings(g) {
				t.Errorf("replayed %s:\n%s\nlive:\n%s", again.Verdict, findings(again), findings(g))
			}
		})
	}
}

// Where nvdisasm cannot be used on a binary, it is dumped by cuobjdump --dump-sass, saying
// why: two cubins of one name (-xelf would write one over the other), or an nvdisasm
// output whose arch is not the one its cubin's name says. The gate judges cuobjdump's dump;
// the replay reads it too.
func TestSASSByCubinsFallsBackToCuobjdump(t *testing.T) {
	src := cuda118(t)
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		why  string
		xelf bool
	}{
		{"two cubins of one name", func(t *testing.T) string {
			dir := t.TempDir()
			list := "ELF file    1: softmax.sm_89.cubin\nELF file    2: softmax.sm_89.cubin\n"
			os.WriteFile(filepath.Join(dir, "list-elf.txt"), []byte(list), 0o644)
			return dir
		}, `two of its cubins are named "softmax.sm_89.cubin"`, false},
		{"an arch that is not the name's", func(t *testing.T) string {
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "nvdisasm"), 0o755)
			list := "ELF file    1: softmax.sm_89.cubin\nELF file    2: softmax.sm_90.cubin\n"
			os.WriteFile(filepath.Join(dir, "list-elf.txt"), []byte(list), 0o644)
			// sm_89's name on sm_90's SASS
			os.Symlink(filepath.Join(src, "nvdisasm", "softmax.sm_90.cubin.txt.gz"), filepath.Join(dir, "nvdisasm", "softmax.sm_89.cubin.txt.gz"))
			os.Symlink(filepath.Join(src, "nvdisasm", "softmax.sm_90.cubin.txt.gz"), filepath.Join(dir, "nvdisasm", "softmax.sm_90.cubin.txt.gz"))
			return dir
		}, `nvdisasm says function _ZN2kg11row_softmaxILi256EEEvPKfPfi of its cubin "softmax.sm_89.cubin" is for sm_90, where the cubin's name says sm_89`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, art := cubinsRun(t, tc.dir(t), fakeNvdisasm(t), Options{})
			g := gate(t, res, "sass")
			if g.Verdict != result.Pass || len(functionMix(t, g)) != 4 {
				t.Fatalf("sass %s, %v:\n%s", g.Verdict, functionMix(t, g), findings(g))
			}
			p, _ := os.ReadFile(filepath.Join(art, "progress.txt"))
			if !strings.Contains(string(p), "head/attention: SASS by cuobjdump --dump-sass: "+tc.why) {
				t.Errorf("the progress does not say %q:\n%s", tc.why, p)
			}
			j := readJournal(t, art)
			stepOf(t, &j, "sass/head/attention")
			if has := slices.ContainsFunc(j.Steps, func(s step) bool { return s.ID == "xelf/head/attention" }); has != tc.xelf {
				t.Errorf("extraction ran: %v, want %v", has, tc.xelf)
			}
			again := gate(t, replayed(t, art), "sass")
			if again.Verdict != g.Verdict || findings(again) != findings(g) || !bytes.Equal(again.Data, g.Data) {
				t.Errorf("replayed %s:\n%s\nlive:\n%s", again.Verdict, findings(again), findings(g))
			}
		})
	}
}

// nvdisasm is --nvdisasm's; else the one beside cuobjdump, as named or where its link
// leads; else, for a cuobjdump found on PATH, nvdisasm on PATH; never another toolkit's on
// PATH beside a cuobjdump given by its path.
func TestFindNvdisasm(t *testing.T) {
	tk, other, links := t.TempDir(), t.TempDir(), t.TempDir()
	for _, f := range []string{filepath.Join(tk, "cuobjdump"), filepath.Join(tk, "nvdisasm"), filepath.Join(other, "cuobjdump"), filepath.Join(other, "nvdisasm")} {
		os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755)
	}
	os.Remove(filepath.Join(other, "nvdisasm"))
	os.Symlink(filepath.Join(tk, "cuobjdump"), filepath.Join(links, "cuobjdump"))
	lonely := t.TempDir()
	os.WriteFile(filepath.Join(lonely, "cuobjdump"), []byte("#!/bin/sh\n"), 0o755)
	onPath := func(dirs ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			if strings.ContainsRune(name, '/') {
				if st, err := os.Stat(name); err != nil || st.IsDir() {
					return "", os.ErrNotExist
				}
				return name, nil
			}
			for _, d := range dirs {
				if _, err := os.Stat(filepath.Join(d, name)); err == nil {
					return filepath.Join(d, name), nil
				}
			}
			return "", os.ErrNotExist
		}
	}
	for _, tc := range []struct {
		name, flag, cuobjdump string
		path                  []string
		want, why             string
	}{
		{"the flag", filepath.Join(other, "cuobjdump"), "cuobjdump", []string{tk}, filepath.Join(other, "cuobjdump"), ""},
		{"the flag names nothing", filepath.Join(other, "nvdisasm"), "cuobjdump", []string{tk}, "", "--nvdisasm " + filepath.Join(other, "nvdisasm")},
		{"beside a cuobjdump path", "", filepath.Join(tk, "cuobjdump"), []string{other}, filepath.Join(tk, "nvdisasm"), ""},
		{"beside where its link leads", "", filepath.Join(links, "cuobjdump"), nil, filepath.Join(tk, "nvdisasm"), ""},
		{"beside the cuobjdump on PATH", "", "cuobjdump", []string{tk, other}, filepath.Join(tk, "nvdisasm"), ""},
		{"on PATH after the cuobjdump on PATH", "", "cuobjdump", []string{other, tk}, filepath.Join(tk, "nvdisasm"), ""},
		{"not another toolkit's", "", filepath.Join(lonely, "cuobjdump"), []string{tk}, "", "no nvdisasm beside " + filepath.Join(lonely, "cuobjdump")},
		{"none", "", "cuobjdump", []string{lonely}, "", "nvdisasm is neither beside cuobjdump (" + filepath.Join(lonely, "cuobjdump") + ") nor on PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := findNvdisasm(tc.flag, tc.cuobjdump, onPath(tc.path...))
			if got != tc.want || !strings.HasPrefix(why, tc.why) || (tc.want == "") != (why != "") {
				t.Errorf("%q (%q), want %q (%q...)", got, why, tc.want, tc.why)
			}
		})
	}
}

// A harness target's binary (the fake build's .so, whose cubins are testdata/cuda11.8-cpu's)
// is dumped by its cubins too, after its listing and resource usage, base's and head's
// each: its SASS reads as cuobjdump's dump of it (a run without nvdisasm), the unchanged
// SASS is found so, and the recording replays.
func TestHarnessBinarySASSByCubins(t *testing.T) {
	fake, err := filepath.Abs(filepath.Join(root, "testdata", "fakegpu"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(`run:
  targets:
    - name: kg
      build: "sh `+fake+`/build.sh"
      harness: "sh `+fake+`/jit-harness.sh"
      binaries: ["build/**/*.so"]
      kernels: [row_softmax]
      functions: ["row_softmax<*>"]
      shapes: {check: [small], sanitize: [small], bench: [mission]}
sass:
  kernels:
    - match: "gemm_wmma<*>"
      require: ["HMMA|HGMMA"]
`), "kernel-gate.yml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(nvdisasm string) (result.Result, string, string) {
		art := filepath.Join(t.TempDir(), "art")
		var progress bytes.Buffer
		res, err := liveRunConfig(t, cfg, Options{Dir: gitRepo(t), BaseRef: "main", Artifacts: art, Gates: []string{"sass"}, Tools: Tools{Nvdisasm: nvdisasm}, Progress: &progress}, "",
			"FAKE_ELF=sm_89 sm_90", "FAKE_BIN_CUBINS="+cuda118(t), "FAKE_BIN_SASS="+filepath.Join(cuda118(t), "cuobjdump-sass.txt.gz"))
		if err != nil {
			t.Fatal(err)
		}
		return res, art, progress.String()
	}
	res, art, progress := run(fakeNvdisasm(t))
	g := gate(t, res, "sass")
	if g.Verdict != result.Pass || len(functionMix(t, g)) != 4 {
		t.Fatalf("sass %s %v:\n%s", g.Verdict, functionMix(t, g), findings(g))
	}
	j := readJournal(t, art)
	for _, side := range []string{"base", "head"} {
		for _, id := range []string{"elf/" + side + "/kg/0", "res/" + side + "/kg/0", "xelf/" + side + "/kg/0", "sass/" + side + "/kg/0/1", "sass/" + side + "/kg/0/6"} {
			stepOf(t, &j, id)
		}
		if slices.ContainsFunc(j.Steps, func(s step) bool { return s.ID == "sass/"+side+"/kg/0" }) {
			t.Errorf("%s's binary was dumped by cuobjdump --dump-sass too", side)
		}
		if _, err := os.Stat(filepath.Join(art, side, "kg", "bin0", "sass.txt")); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(progress, "kg: the SASS of its 2 function × arch pair(s) is byte-identical to base's") {
		t.Errorf("base's and head's SASS are not found unchanged:\n%s", progress)
	}
	whole, _, _ := run("")
	if wg := gate(t, whole, "sass"); wg.Verdict != g.Verdict || !maps.Equal(functionMix(t, wg), functionMix(t, g)) {
		t.Errorf("by cubins %s %v\nwhole %s %v", g.Verdict, functionMix(t, g), wg.Verdict, functionMix(t, wg))
	}
	again, err := Run(context.Background(), cfg, Options{Replay: art, Tool: "kernel-gate test", Gates: []string{"sass"}})
	if err != nil {
		t.Fatal(err)
	}
	if ag := gate(t, again, "sass"); ag.Verdict != g.Verdict || findings(ag) != findings(g) || !bytes.Equal(ag.Data, g.Data) {
		t.Errorf("replayed %s:\n%s\nlive:\n%s", ag.Verdict, findings(ag), findings(g))
	}
}

// Base's and head's SASS compare by digest only when one tool dumped both: the same cubins
// dumped by nvdisasm on one side and cuobjdump on the other are "changed", saying why.
func TestSASSChangedComparesOneFormat(t *testing.T) {
	read := func(name string) *sass.Dump {
		d, err := readSASS(filepath.Join(cuda118(t), name))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	whole, cubins := read("cuobjdump-sass.txt.gz"), read(filepath.Join("nvdisasm", "softmax.sm_90.cubin.txt.gz"))
	wholeSoftmax := &sass.Dump{Format: whole.Format}
	for _, f := range whole.Functions {
		if f.Arch == "sm_90" && strings.Contains(f.Name.Mangled, "row_softmax") {
			wholeSoftmax.Functions = append(wholeSoftmax.Functions, f)
		}
	}
	p := &pipeline{decided: Decisions{BaseRev: "abc"}}
	for _, tc := range []struct {
		name       string
		base, head *sass.Dump
		changed    bool
		why        string
	}{
		{"nvdisasm both", cubins, cubins, false, "byte-identical to base's"},
		{"cuobjdump both", wholeSoftmax, wholeSoftmax, false, "byte-identical to base's"},
		{"one each", wholeSoftmax, cubins, true, "base's SASS was dumped by cuobjdump and head's by nvdisasm, whose digests do not compare"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &build{}
			b.dump[sideBase], b.dump[sideHead] = tc.base, tc.head
			changed, why := p.sassChanged(b, []string{"row_softmax<*>"})
			if changed != tc.changed || !strings.Contains(why, tc.why) {
				t.Errorf("changed %v (%s), want %v (%s)", changed, why, tc.changed, tc.why)
			}
		})
	}
}

// A kernel's SASS is its own code and the device functions it calls (testdata/cuda11.8-rdc:
// built with -rdc=true, kern calls helper through a relocation, so only helper's bytes
// differ between base and head). A target whose functions globs name kern is not
// "unchanged" while a function no target names changed: its sanitizer, timing and profile
// run. The same with cuobjdump's dumps, which do not say which functions are kernels.
func TestSASSChangedSeesTheDeviceFunctionsItCalls(t *testing.T) {
	read := func(name string) *sass.Dump {
		d, err := readSASS(filepath.Join(root, "testdata", "cuda11.8-rdc", name))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	p := &pipeline{decided: Decisions{BaseRev: "abc"}, runTargets: []config.Target{{Name: "kern", Functions: []string{"kern"}}}}
	for _, tool := range []string{"nvdisasm", "cuobjdump"} {
		t.Run(tool, func(t *testing.T) {
			b := &build{}
			b.dump[sideBase], b.dump[sideHead] = read(tool+"-base.txt"), read(tool+"-head.txt")
			if changed, why := p.sassChanged(b, []string{"kern"}); !changed || !strings.Contains(why, "e.g. helper(float) on sm_89") {
				t.Errorf("changed %v (%s), want helper's change seen", changed, why)
			}
			b.dump[sideBase] = b.dump[sideHead]
			if changed, why := p.sassChanged(b, []string{"kern"}); changed || !strings.Contains(why, "the SASS of its 1 function × arch pair(s) is byte-identical to base's, and so is that of the 1 that no target names") {
				t.Errorf("against itself: changed %v (%s)", changed, why)
			}
		})
	}
}
