package abrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// smiTimeout bounds one nvidia-smi query.
const smiTimeout = 20 * time.Second

// Clock is the GPU's state during one round, as nvidia-smi reported it: the worst of the
// readings its stream gave from just before the round began until it ended (smiwatch.go),
// or, when the stream had none, one query's just after the round. Numbers nvidia-smi could
// not give ("[N/A]") are null.
type Clock struct {
	// Round is the round it was read for (1-based; 0 is the warm-up round).
	Round        int      `json:"round"`
	SMClockMHz   *float64 `json:"sm_clock_mhz"`
	TemperatureC *float64 `json:"temperature_c"`
	// Reasons is clocks_event_reasons.active as printed ("0x0000000000000004").
	Reasons string `json:"reasons"`
	// ReasonNames spells out the bits other than GPU idle ("SwPowerCap").
	ReasonNames []string `json:"reason_names,omitempty"`
	// Throttled is set when a reason other than none (0x0) and GPU idle (0x1) is active:
	// the round is dropped.
	Throttled bool `json:"throttled"`
}

// reasonName names NVML's clock event reason bits (nvmlClocksEventReason*).
func reasonName(bit uint64) string {
	switch bit {
	case 0x1:
		return "GpuIdle"
	case 0x2:
		return "ApplicationsClocksSetting"
	case 0x4:
		return "SwPowerCap"
	case 0x8:
		return "HwSlowdown"
	case 0x10:
		return "SyncBoost"
	case 0x20:
		return "SwThermalSlowdown"
	case 0x40:
		return "HwThermalSlowdown"
	case 0x80:
		return "HwPowerBrakeSlowdown"
	case 0x100:
		return "DisplayClockSetting"
	}
	return fmt.Sprintf("0x%x", bit)
}

// The query's fields. Drivers before clocks_event_reasons (r535) call the reasons
// clocks_throttle_reasons; both are tried.
const (
	reasonsField    = "clocks_event_reasons.active"
	oldReasonsField = "clocks_throttle_reasons.active"
)

// ClockQueryArgs are nvidia-smi's arguments for the runner's clock readings (on drivers
// that know clocks_event_reasons); the stream adds --id and -lms.
func ClockQueryArgs() []string { return clockQueryArgs(reasonsField) }

func clockQueryArgs(field string) []string {
	return []string{"--query-gpu=clocks.sm,temperature.gpu," + field, "--format=csv,noheader,nounits"}
}

// smi reads the GPU's clocks with nvidia-smi. It only queries: it never sets clocks or
// anything else.
type smi struct {
	bin   string // resolved path; "" when nvidia-smi is missing
	id    string // --id, from CUDA_VISIBLE_DEVICES; "" reads the first GPU listed
	field string // the reasons field that works
	// warnedMany is set once the "several GPUs" warning has been given.
	warnedMany bool
}

// newSMI finds nvidia-smi (name on PATH, or a path). ok is false when it is missing.
func newSMI(name string, environ []string) (*smi, error) {
	bin, err := exec.LookPath(name)
	if err != nil {
		return &smi{}, err
	}
	s := &smi{bin: bin, field: reasonsField}
	if v, ok := LookupEnv(environ, "CUDA_VISIBLE_DEVICES"); ok {
		first, _, _ := strings.Cut(v, ",")
		if first = strings.TrimSpace(first); first != "" && !strings.HasPrefix(first, "-") {
			s.id = first
		}
	}
	return s, nil
}

// query runs nvidia-smi once and returns its output.
func (s *smi) query(ctx context.Context, field string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, smiTimeout)
	defer cancel()
	args := clockQueryArgs(field)
	if s.id != "" {
		args = append(args, "--id="+s.id)
	}
	cmd := procgroup.Command(ctx, nil, s.bin, args...)
	cmd.WaitDelay = 2 * time.Second
	var out, stderr capBuffer
	out.max, stderr.max = 64<<10, 4<<10
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	procgroup.KillRest(cmd)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("nvidia-smi did not answer within %s", smiTimeout)
		}
		msg := strings.TrimSpace(firstLine(out.String() + "\n" + stderr.String()))
		if msg == "" {
			return nil, fmt.Errorf("nvidia-smi: %v", err)
		}
		return nil, fmt.Errorf("nvidia-smi: %v: %s", err, msgtext.Clip(msg, 200))
	}
	return out.Bytes(), nil
}

// sample reads the clocks for round with one query; warn gets a message to report once.
func (s *smi) sample(ctx context.Context, round int, warn func(string)) (Clock, error) {
	out, err := s.query(ctx, s.field)
	if err != nil && s.field == reasonsField {
		// An older driver: the field had another name.
		if old, oerr := s.query(ctx, oldReasonsField); oerr == nil {
			s.field, out, err = oldReasonsField, old, nil
		}
	}
	if err != nil {
		return Clock{Round: round}, err
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return Clock{Round: round}, errors.New("nvidia-smi printed nothing")
	}
	if len(lines) > 1 && !s.warnedMany {
		s.warnedMany = true
		warn(fmt.Sprintf("nvidia-smi lists %d GPUs and CUDA_VISIBLE_DEVICES names none: the first one's clocks were read (set CUDA_VISIBLE_DEVICES to the GPU the harness uses)", len(lines)))
	}
	return parseClock(lines[0], round)
}

// parseClock reads "1980, 34, 0x0000000000000000".
func parseClock(line string, round int) (Clock, error) {
	c := Clock{Round: round}
	f := strings.Split(line, ",")
	if len(f) != 3 {
		return c, fmt.Errorf("nvidia-smi printed %q, want 3 comma-separated fields", msgtext.Clip(line, 200))
	}
	num := func(s string) *float64 {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil // [N/A], [Not Supported]; JSON has no NaN or Inf
		}
		return &v
	}
	c.SMClockMHz, c.TemperatureC = num(f[0]), num(f[1])
	c.Reasons = strings.TrimSpace(f[2])
	mask, err := strconv.ParseUint(c.Reasons, 0, 64)
	if err != nil {
		return c, nil // not reported: nothing to drop on
	}
	c.ReasonNames, c.Throttled = reasonsOf(mask)
	return c, nil
}

// reasonsOf names a clock event reasons mask's bits other than GPU idle; throttled is set
// when there is one.
func reasonsOf(mask uint64) (names []string, throttled bool) {
	for m := mask &^ 0x1; m != 0; m &= m - 1 {
		names = append(names, reasonName(1<<bits.TrailingZeros64(m)))
	}
	return names, mask&^0x1 != 0
}

// capBuffer keeps the first max bytes written to it and discards the rest.
type capBuffer struct {
	bytes.Buffer
	max int
}

func (b *capBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// LookupEnv finds NAME in a "NAME=value" list; the last one wins, as for exec.
func LookupEnv(environ []string, name string) (string, bool) {
	v, ok := "", false
	for _, kv := range environ {
		if k, val, found := strings.Cut(kv, "="); found && k == name {
			v, ok = val, true
		}
	}
	return v, ok
}
