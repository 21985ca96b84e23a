package abrun

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
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

// FuzzClockStream feeds arbitrary bytes to the clock stream's reader as nvidia-smi's
// output: lines are read within the cap, each kept as a reading or as a bad line, and a
// round's reading folds only lines that read as readings (parseReading), its throttled
// flag agreeing with the reasons it reports and set when any reading's was, its SM clock
// the lowest, and it encodes as JSON. Nothing panics or hangs, and the readings kept stay
// bounded.
func FuzzClockStream(f *testing.F) {
	for _, seed := range []string{
		"1980, 45, 0x0000000000000000\n1410, 88, 0x0000000000000020\n",
		"[N/A], [N/A], [N/A]\n",
		"1980, 45\n",
		"1980, 45, 0x1, 4\n",
		"1e400, -0, 0xffffffffffffffff\n",
		strings.Repeat("9", 5000) + "\n",
		"\r\n\n, , \n",
		"1980, 45, throttled\n345, 39, 0x0000000000000001\n",
		"NaN, 45, 0x0\n1980, [Not Supported], [N/A]\n",
	} {
		f.Add([]byte(seed))
	}
	// The real stream (TestClockStreamRealLines's capture), comment lines and all.
	raw, err := os.ReadFile("testdata/smi-stream-h100.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &clockWatch{interval: 100 * time.Millisecond}
		t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
		br := bufio.NewReaderSize(bytes.NewReader(data), 64)
		n := 0
		for {
			line, err := readLine(br, maxClockLine)
			if len(line) > maxClockLine {
				t.Fatalf("a line of %d bytes, cap %d", len(line), maxClockLine)
			}
			if l := strings.TrimSpace(string(line)); l != "" {
				w.add(t0.Add(time.Duration(n)*time.Millisecond), l)
				n++
			}
			if err != nil {
				break
			}
		}
		if len(w.samples) > maxClockSamples {
			t.Fatalf("%d readings kept", len(w.samples))
		}
		c, ok := w.reading(1, t0, t0.Add(time.Duration(n)*time.Millisecond))
		usable := 0
		for _, s := range w.samples {
			if !s.bad {
				usable++
			}
		}
		if ok != (usable > 0) {
			t.Fatalf("ok %v with %d usable readings", ok, usable)
		}
		if mask, err := strconv.ParseUint(c.Reasons, 0, 64); ok && err == nil && c.Throttled != (mask&^0x1 != 0) {
			t.Fatalf("reasons %s, throttled %v", c.Reasons, c.Throttled)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !ok {
			return
		}
		throttled := false
		var lowest *float64
		for _, s := range w.samples {
			if s.bad {
				continue
			}
			throttled = throttled || s.c.Throttled
			if v := s.c.SMClockMHz; v != nil && (lowest == nil || *v < *lowest) {
				lowest = v
			}
		}
		if c.Throttled != throttled {
			t.Fatalf("folded throttled %v, readings' %v", c.Throttled, throttled)
		}
		if (lowest == nil) != (c.SMClockMHz == nil) || (lowest != nil && *lowest != *c.SMClockMHz) {
			t.Fatalf("folded SM clock %v, lowest %v", c.SMClockMHz, lowest)
		}
	})
}
