package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkScanDir measures ScanTree over a generated repository of 10,000 files: shell
// scripts, workflows, Makefiles, Dockerfiles, Python and Markdown (about 30-60 lines each,
// mostly safe commands with a dangerous one in every seventh file), walked, read,
// classified, parsed and matched with the default rules. It reports files/s; one op is one
// scan of the whole tree (the files are written once, before the timer).
func BenchmarkScanDir(b *testing.B) {
	const n = 10000
	root := b.TempDir()
	for i := range n {
		rel, content := benchFile(i)
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var findings, files int
	for b.Loop() {
		fs, _, nf, err := ScanTree(root, Config{})
		if err != nil {
			b.Fatal(err)
		}
		findings, files = len(fs), nf
	}
	if files == 0 || findings == 0 {
		b.Fatalf("scanned %d files, %d findings", files, findings)
	}
	b.ReportMetric(float64(files)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
	b.ReportMetric(float64(findings), "findings")
}

// benchFile generates the i-th file of the benchmark repository.
func benchFile(i int) (string, string) {
	danger := i%7 == 0
	dir := fmt.Sprintf("pkg%03d", i/100)
	var b strings.Builder
	body := func(prefix string, lines int) {
		for k := range lines {
			switch k % 6 {
			case 0:
				fmt.Fprintf(&b, "%sif [ -f build/%d.o ]; then echo \"cached %d\"; fi\n", prefix, k, i)
			case 1:
				fmt.Fprintf(&b, "%snvcc -arch=sm_90a -Xptxas -v -c kernels/k%d.cu -o build/k%d.o 2>&1 | tee -a log.txt\n", prefix, k, k)
			case 2:
				fmt.Fprintf(&b, "%sfor f in build/*.o; do cuobjdump --dump-sass \"$f\" > \"${f%%.o}.sass\"; done\n", prefix)
			case 3:
				fmt.Fprintf(&b, "%snvidia-smi --query-gpu=name,clocks.sm --format=csv  # reboot if hung\n", prefix)
			case 4:
				fmt.Fprintf(&b, "%sssh bench-%d \"cd /srv && ./bench --iters %d\"\n", prefix, i%13, k)
			case 5:
				fmt.Fprintf(&b, "%secho \"sudo shutdown -h now is not run here\"\n", prefix)
			}
		}
		if danger {
			fmt.Fprintf(&b, "%ssudo bash -c 'gcloud compute instances stop gpu-%d --zone us-central1-a'\n", prefix, i)
		}
	}
	switch i % 20 {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		b.WriteString("#!/usr/bin/env bash\nset -euo pipefail\nrun() { \"$@\"; }\n")
		body("", 30+i%30)
		return fmt.Sprintf("%s/scripts/s%d.sh", dir, i), b.String()
	case 8, 9, 10, 11:
		b.WriteString("name: ci\non: [push]\njobs:\n  build:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - uses: actions/checkout@v4\n      - name: build\n        run: |\n")
		body("          ", 30+i%30)
		return fmt.Sprintf("%s/.github/workflows/w%d.yml", dir, i), b.String()
	case 12, 13:
		b.WriteString("ARCH ?= sm_90a\n.PHONY: all\nall:\n")
		body("\t", 30+i%30)
		return fmt.Sprintf("%s/m%d.mk", dir, i), b.String()
	case 14, 15:
		b.WriteString("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n")
		body("RUN ", 30+i%30)
		return fmt.Sprintf("%s/Dockerfile.%d", dir, i), b.String()
	case 16, 17, 18:
		b.WriteString("import subprocess\nimport os\n\n\ndef main():\n    \"\"\"Run the benchmark (never sudo reboot).\"\"\"\n")
		for k := range 30 + i%30 {
			fmt.Fprintf(&b, "    subprocess.run([\"./bench\", \"--case\", \"%d\"], check=True)  # step %d\n", k, k)
		}
		if danger {
			b.WriteString("    os.system(\"sudo nvidia-smi -r\")\n")
		}
		return fmt.Sprintf("%s/tools/t%d.py", dir, i), b.String()
	default:
		b.WriteString("# Notes\n\n```sh\nsudo reboot\n```\n")
		return fmt.Sprintf("%s/docs/n%d.md", dir, i), b.String()
	}
}

// BenchmarkDeepNesting measures ScanFile over each of TestDeepNesting's files (a million
// nested constructs for each front-end); it reports the work as bytes of text gone over
// per byte of the file.
func BenchmarkDeepNesting(b *testing.B) {
	for _, tt := range deepNesting() {
		b.Run(tt.name, func(b *testing.B) {
			src := []byte(tt.src)
			b.SetBytes(int64(len(src)))
			var scanned int
			for b.Loop() {
				_, _, scanned = scanFile(tt.path, src, Config{})
			}
			b.ReportMetric(float64(scanned)/float64(len(src)), "passes")
		})
	}
}
