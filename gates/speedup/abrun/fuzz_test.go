package abrun

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzServeAnswers feeds arbitrary bytes to the serve protocol's reader as a harness's
// answer descriptor: lines are read within the cap, and each is parsed as the answer to
// round 1. Nothing panics or hangs, memory stays within the cap, and an answer accepted is
// one to round 1 with a harness file.
func FuzzServeAnswers(f *testing.F) {
	file := `{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"}, "results": [{"kernel": "k", "shape": "s", "rounds_us": [[1.5, 2, "NaN"]]}]}`
	for _, seed := range []string{
		`{"serve": "kernel-gate/serve/v1"}` + "\n" + `{"round": 1, "file": ` + file + "}\n",
		`{"round": 1, "file": ` + file + "}",
		`{"round": 2, "file": ` + file + "}\n",
		`{"round": 1, "round": 1, "file": ` + file + "}\n",
		`{"round": 1, "Round": 1, "file": null}` + "\n",
		`{"round": 1, "file": ` + file + `, "extra": 1}` + "\n",
		`{"round": 1, "file": ` + file + "} {}\n",
		"\r\n\n{\"round\": 1}\r\n",
		strings.Repeat("[", 20000) + "\n",
		"{\"round\": 1e400, \"file\": {}}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 16
		br := bufio.NewReaderSize(bytes.NewReader(data), 64)
		for {
			line, err := readLine(br, max)
			if len(line) > max {
				t.Fatalf("a line of %d bytes, cap %d", len(line), max)
			}
			if len(line) > 0 {
				if got, why := parseAnswer(line, 1); why == "" && (got == nil || got.Schema == "") {
					t.Fatalf("accepted %q without a harness file", line)
				} else if why != "" && got != nil {
					t.Fatalf("a file and a reason for %q", line)
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errLineTooLong) && !errors.Is(err, errNoNewline) {
					t.Fatalf("read error %v", err)
				}
				return
			}
		}
	})
}
