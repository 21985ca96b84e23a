package guard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kernel-gate/kernel-gate/gates/guard/source"
)

// fuzzPaths give the fuzzer's content every kind of file the guard reads.
var fuzzPaths = []string{"x.sh", ".github/workflows/ci.yml", "action.yml", "Makefile", "Dockerfile", "x.py", "tools/noext", "README.md"}

func fuzzKind(rel string) uint8 {
	switch Classify(rel, nil) {
	case KindWorkflow:
		return 1
	case KindAction:
		return 2
	case KindMakefile:
		return 3
	case KindDockerfile:
		return 4
	case KindPython:
		return 5
	case KindDoc:
		return 7
	}
	return 0
}

// FuzzScanFile scans arbitrary content as each kind of file: it must never panic, and
// every finding must have a line, a column and a known rule.
func FuzzScanFile(f *testing.F) {
	root := "../../testdata/guard-unit/repo"
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		f.Add(fuzzKind(filepath.ToSlash(rel)), content)
		return nil
	})
	for _, s := range []string{
		"sudo shutdown -h now\n", "bash -c 'ssh h \"sudo reboot\"'\n", "f() { sudo \"$@\"; }\nf reboot\n",
		"alias a='sudo'\na poweroff\n", "X=(nvidia-smi -r)\n\"${X[@]}\"\n", "cat <<EOF | bash\nreboot\nEOF\n",
		"a=$b\nb=$a\n$a\n", "eval eval eval reboot\n", "echo b > /proc/sysrq-trigger\n",
	} {
		f.Add(uint8(0), []byte(s))
	}
	f.Add(uint8(1), []byte("jobs:\n  a:\n    steps:\n      - run: |\n          sudo reboot\n      - shell: python\n        run: \"import os; os.system('halt')\"\n"))
	f.Add(uint8(2), []byte("runs:\n  using: composite\n  steps:\n    - shell: bash\n      run: sudo poweroff\n"))
	f.Add(uint8(3), []byte("X := $(shell sudo reboot)\nall:\n\t@$(X) $$HOME \\\n\t  nvidia-smi -r\n"))
	f.Add(uint8(4), []byte("RUN <<EOF\nreboot\nEOF\nRUN [\"sh\", \"-c\", \"halt\"]\n"))
	f.Add(uint8(5), []byte("import subprocess as sp\nsp.run(f'''{x}\nsudo reboot''', shell=True)\n"))
	f.Add(uint8(1), []byte("on:\n  workflow_dispatch:\n    inputs:\n      cmd:\n        options: [a, 'sudo reboot']\njobs:\n  a:\n    strategy:\n      matrix:\n        x: [${{ inputs.cmd }}]\n    steps:\n      - run: ${{ matrix.x || inputs.cmd && 'halt' }}\n      - uses: o/ec2-runner@v1\n        with:\n          mode: ${{ inputs.cmd }}\n          script: echo aGFsdA== | base64 -d | sh\n"))
	f.Add(uint8(0), []byte("f() { local c=\"$1\"; shift; docker run --privileged alpine $c \"$@\"; }\nf nsenter -t 1 -- reboot\ngcloud compute instances \"$2\" x\n$G compute instances delete y\n"))
	f.Add(uint8(0), []byte("screen -S s -X stuff 'reboot\\n'\ntmux send-keys 'halt' Enter\ncurl -X DELETE https://api.vultr.com/v2/instances/$ID\n"))
	f.Add(uint8(5), []byte("import boto3, base64\nec2 = boto3.resource('ec2')\nfor i in ec2.instances.all():\n    i.stop()\ndef sh(c):\n    os.system(c)\nsh(base64.b64decode('aGFsdA==').decode())\n"))
	ids := map[string]bool{}
	for _, r := range DefaultRules() {
		ids[r.ID] = true
	}
	f.Fuzz(func(t *testing.T, kind uint8, content []byte) {
		p := fuzzPaths[int(kind)%len(fuzzPaths)]
		fs, ws := ScanFile(p, content, Config{})
		lines := strings.Count(string(content), "\n") + 1
		for _, fd := range fs {
			if fd.Line < 1 || fd.Line > lines || fd.Column < 1 || fd.EndLine < fd.Line || !ids[fd.Rule] || fd.Path != p {
				t.Errorf("bad finding %+v (%d lines)", fd, lines)
			}
			if !utf8.ValidString(fd.Command) || utf8.RuneCountInString(fd.Command) > source.MaxCommandLen || strings.ContainsAny(fd.Command, "\n\r") {
				t.Errorf("bad command %q", fd.Command)
			}
		}
		for _, w := range ws {
			if strings.Contains(w.Message, "internal error") || w.Line < 0 || w.Line > lines {
				t.Errorf("warning %+v", w)
			}
		}
		// What a YAML file named on the command line is, by its keys.
		if k := shapeKind(content); k != KindNone && k != KindWorkflow && k != KindAction {
			t.Errorf("shapeKind = %q", k)
		}
	})
}
