package cli

import (
	"bytes"
	"context"
	"strings"

	"github.com/kernel-gate/kernel-gate/explain"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/occupancy"
	"github.com/kernel-gate/kernel-gate/internal/outfile"
	"github.com/kernel-gate/kernel-gate/report"
)

// runExplain is `kernel-gate explain BASE.json HEAD.json`, or the same from two builds'
// logs and SASS dumps (--base-log/--head-log, --base-sass/--head-sass): package explain
// pairs and explains the kernels, report.RenderExplained writes them. Exit 0 whatever
// changed: it explains, it does not judge.
func runExplain(ctx context.Context, args []string, e env) (int, error) {
	var c common
	var o explain.Options
	var baseLogs, headLogs, baseSASS, headSASS multiFlag
	fs := flagSet("explain", e, &c, []string{"text", "json", "markdown"})
	fs.Var(&baseLogs, "base-log", "base's build `LOG` (nvcc -Xptxas -v; repeatable)")
	fs.Var(&headLogs, "head-log", "head's build `LOG` (repeatable)")
	fs.Var(&baseSASS, "base-sass", "base's SASS `DUMP` (cuobjdump --dump-sass or nvdisasm; repeatable)")
	fs.Var(&headSASS, "head-sass", "head's SASS `DUMP` (repeatable)")
	fs.StringVar(&o.GPU, "gpu", "", "the GPU's `ARCH` (sm_90) or compute capability (9.0) for occupancy (default: HEAD.json's device, else each kernel's arch)")
	fs.IntVar(&o.BlockSize, "block-size", 0, "the launch's threads per block, `N` (default: unknown, occupancy left out)")
	fs.IntVar(&o.DynamicSmem, "dynamic-smem", 0, "the launch's dynamic shared memory in `BYTES`")
	files, err := parse(fs, args, e)
	if err != nil {
		return failed(err)
	}
	switch {
	case len(files) != 0 && len(files) != 2:
		return failed(usagef("explain takes two results, BASE.json HEAD.json, or --base-log/--head-log (and --base-sass/--head-sass); got %d file(s)", len(files)))
	case len(files) == 0 && (len(baseLogs)+len(baseSASS) == 0 || len(headLogs)+len(headSASS) == 0):
		return failed(usagef("explain needs both sides: BASE.json HEAD.json, or --base-log/--base-sass and --head-log/--head-sass"))
	case len(files) == 2 && len(baseLogs)+len(headLogs) > 0:
		return failed(usagef("--base-log and --head-log do not apply with two results, which carry their ptxas records: leave them out"))
	case o.BlockSize < 0 || o.BlockSize > 1024:
		return failed(usagef("--block-size %d: want 1 to 1024 threads", o.BlockSize))
	case o.DynamicSmem < 0:
		return failed(usagef("--dynamic-smem %d: want 0 or more bytes", o.DynamicSmem))
	}
	if o.GPU != "" {
		if _, ok := occupancy.For(o.GPU); !ok {
			return failed(usagef("--gpu %q: no occupancy limits for it (an arch such as sm_90, or a compute capability such as 9.0)", o.GPU))
		}
	}
	f, err := report.ParseFormat(c.format)
	if err != nil || f == report.SARIF {
		return failed(usagef("--format %q: explain writes text, json or markdown", c.format))
	}
	reads := append(append(append(append(append([]string{}, files...), baseLogs...), headLogs...), baseSASS...), headSASS...)
	if err := outfile.Check(c.out, outfile.Reads{Files: reads}); err != nil {
		return failed(err)
	}
	var sides [2]explain.Sources
	for i, in := range []struct {
		result      string
		logs, dumps []string
	}{{"", baseLogs, baseSASS}, {"", headLogs, headSASS}} {
		if len(files) == 2 {
			in.result = files[i]
		}
		if err := readSources(ctx, &sides[i], in.result, in.logs, in.dumps); err != nil {
			return failed(exitcode.BadInput(err))
		}
	}
	var buf bytes.Buffer
	if err := report.RenderExplained(&buf, explain.Explain(sides[0], sides[1], o), f); err != nil {
		return failed(exitcode.CouldNotRun(err))
	}
	if err := deliver(c.out, buf.Bytes(), e); err != nil {
		return failed(err)
	}
	return exitPass, nil
}

// readSources reads one side: a result, build logs and SASS dumps.
func readSources(ctx context.Context, s *explain.Sources, res string, logs, dumps []string) error {
	if res != "" {
		if err := s.ReadResult(ctx, res); err != nil {
			return err
		}
	}
	for _, l := range logs {
		if err := s.ReadLog(ctx, l); err != nil {
			return err
		}
	}
	for _, d := range dumps {
		if err := s.ReadSASS(ctx, strings.TrimSpace(d)); err != nil {
			return err
		}
	}
	return nil
}
