package abrun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/childenv"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// A served round takes milliseconds, and one nvidia-smi query about 20 ms (an H200,
// driver 580): asked before every round, it was most of the runner's own time. So the
// runner starts one nvidia-smi that prints a reading every clockInterval
// (`nvidia-smi --query-gpu=... -lms 100`, read only, as the one-shot query) and takes a
// round's clocks from the readings that arrived while it ran.
const (
	// clockInterval is the stream's period.
	clockInterval = 100 * time.Millisecond
	// maxClockLine caps one line of the stream; maxClockSamples the readings kept (about 7
	// minutes of them: rounds are far shorter).
	maxClockLine    = 4 << 10
	maxClockSamples = 4096
)

// clockSample is one reading of the stream, as it arrived.
type clockSample struct {
	at  time.Time
	c   Clock
	bad bool // the line did not read as a reading
}

// clockWatch is a running `nvidia-smi ... -lms N` and the readings it printed.
type clockWatch struct {
	interval time.Duration
	cancel   context.CancelFunc
	done     chan struct{}

	mu sync.Mutex
	// samples is a ring of the newest maxClockSamples readings: oldest first until it is
	// full, then oldest at next.
	samples []clockSample
	next    int
	badLine string // the first line that was not a reading
	ended   string // why the stream ended; "" while it runs
}

// watch starts the stream. It first asks once, as sample does, to learn which reasons
// field the driver knows (and to warn, through warn, about several GPUs); the stream then
// reads the GPU that query read (--id, or the first GPU listed: --id=0).
func (s *smi) watch(ctx context.Context, interval time.Duration, warn func(string)) (*clockWatch, error) {
	if _, err := s.sample(ctx, 0, warn); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	id := s.id
	if id == "" {
		id = "0"
	}
	args := append(clockQueryArgs(s.field), "--id="+id, "-lms", strconv.FormatInt(interval.Milliseconds(), 10))
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = childenv.Environ(nil)
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = 2 * time.Second
	stderr := &capBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("nvidia-smi: %w", err)
	}
	w := &clockWatch{interval: interval, cancel: cancel, done: make(chan struct{})}
	go w.read(ctx, out, cmd, stderr)
	return w, nil
}

// read keeps the stream's readings until it ends.
func (w *clockWatch) read(ctx context.Context, out io.Reader, cmd *exec.Cmd, stderr *capBuffer) {
	defer close(w.done)
	br := bufio.NewReaderSize(out, maxClockLine)
	var rerr error
	for {
		line, err := readLine(br, maxClockLine)
		if l := strings.TrimSpace(string(line)); l != "" {
			w.add(time.Now(), l)
		}
		if err != nil {
			rerr = err
			break
		}
	}
	stopped := ctx.Err() != nil
	if !errors.Is(rerr, io.EOF) {
		w.cancel() // a line too long leaves nvidia-smi running: it is stopped here
	}
	// At the end of its output nvidia-smi has exited, or is exiting: its own status, not the
	// cancel's, says how (stop cancels one that keeps running without output).
	werr := cmd.Wait()
	w.cancel()
	procgroup.KillRest(cmd)
	var why string
	switch {
	case stopped:
		why = "stopped"
	case errors.Is(rerr, errLineTooLong):
		why = fmt.Sprintf("it printed a line longer than %d bytes", maxClockLine)
	case !errors.Is(rerr, io.EOF):
		why = fmt.Sprintf("its output could not be read (%v)", rerr)
	case werr != nil:
		why = fmt.Sprintf("nvidia-smi exited: %v", werr)
		if msg := firstLine(stderr.String()); msg != "" {
			why += ": " + msgtext.Clip(msg, 200)
		}
	default:
		why = "nvidia-smi exited with status 0"
	}
	w.mu.Lock()
	w.ended = why
	w.mu.Unlock()
}

// add keeps one line of the stream.
func (w *clockWatch) add(at time.Time, line string) {
	c, err := parseReading(line)
	s := clockSample{at: at, c: c, bad: err != nil}
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.bad && w.badLine == "" {
		w.badLine = msgtext.Clip(line, 200)
	}
	if len(w.samples) < maxClockSamples {
		w.samples = append(w.samples, s)
		return
	}
	w.samples[w.next] = s
	w.next = (w.next + 1) % len(w.samples)
}

// parseReading reads one line of the stream as parseClock does, but more strictly: each
// field must be a number or one of nvidia-smi's bracketed words ("[N/A]", "[Not
// Supported]"). A line that is neither (a message, a cut line) is not a reading, so that
// reasons nvidia-smi did not print are never taken as none.
func parseReading(line string) (Clock, error) {
	c, err := parseClock(line, 0)
	if err != nil {
		return c, err
	}
	for i, f := range strings.Split(line, ",") {
		f = strings.TrimSpace(f)
		if len(f) >= 2 && f[0] == '[' && f[len(f)-1] == ']' && !strings.ContainsAny(f[1:len(f)-1], "[]") {
			continue
		}
		var err error
		if i == 2 {
			_, err = strconv.ParseUint(f, 0, 64)
		} else if v, ferr := strconv.ParseFloat(f, 64); ferr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			err = errors.New("not a number")
		}
		if err != nil {
			return c, fmt.Errorf("nvidia-smi printed %q, field %d is neither a number nor [N/A]", msgtext.Clip(line, 200), i+1)
		}
	}
	return c, nil
}

// reading is round's clocks from the readings that arrived between from and to and the
// newest one before from: the GPU's state from just before the round began until it ended
// (a round shorter than the interval may have no reading of its own). Each reading's worst
// counts: the lowest SM clock, the highest temperature, every clock event reason seen
// (their bits or'ed). ok is false when no reading that arrived within 3 intervals and a
// second of to is there, or the stream has ended: the caller asks nvidia-smi once instead.
func (w *clockWatch) reading(round int, from, to time.Time) (Clock, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended != "" {
		// Once it has ended, every round is read the same way, by one query.
		return Clock{Round: round}, false
	}
	var picked []Clock
	var newest time.Time
	for i := range w.samples {
		s := &w.samples[(w.next+i)%len(w.samples)]
		if s.bad || s.at.After(to) {
			continue
		}
		if s.at.Before(from) {
			// Only the newest before from: it stands for the round's start.
			picked = picked[:0]
		}
		picked = append(picked, s.c)
		newest = s.at
	}
	if len(picked) == 0 || newest.Before(to.Add(-(3*w.interval + time.Second))) {
		return Clock{Round: round}, false
	}
	return foldClocks(round, picked), true
}

// foldClocks is the worst of several readings: the lowest SM clock, the highest
// temperature, the reasons' bits or'ed. A reading whose reasons nvidia-smi could not give
// ("[N/A]") leaves them unchecked: that text is kept, as for one reading.
func foldClocks(round int, cs []Clock) Clock {
	out := Clock{Round: round}
	var mask uint64
	for _, c := range cs {
		if c.SMClockMHz != nil && (out.SMClockMHz == nil || *c.SMClockMHz < *out.SMClockMHz) {
			out.SMClockMHz = ptr(*c.SMClockMHz)
		}
		if c.TemperatureC != nil && (out.TemperatureC == nil || *c.TemperatureC > *out.TemperatureC) {
			out.TemperatureC = ptr(*c.TemperatureC)
		}
		m, err := strconv.ParseUint(c.Reasons, 0, 64)
		if err != nil {
			if out.Reasons == "" {
				out.Reasons = c.Reasons
			}
			continue
		}
		mask |= m
	}
	if out.Reasons == "" {
		out.Reasons = fmt.Sprintf("0x%016x", mask)
	}
	out.ReasonNames, out.Throttled = reasonsOf(mask)
	return out
}

// trouble says why the stream is of no use any more ("" while it runs) and the first line
// it printed that was not a reading.
func (w *clockWatch) trouble() (ended, badLine string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended, w.badLine
}

// stop ends nvidia-smi and waits for the reader.
func (w *clockWatch) stop() {
	w.cancel()
	<-w.done
}
