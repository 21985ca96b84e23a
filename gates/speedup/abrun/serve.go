package abrun

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// The serve protocol (docs/harness-protocol.md, "Serving rounds"): the runner starts a
// harness with KG_MODE=serve and KG_SERVE_FD naming the descriptor its answers go to; the
// harness sets up once, writes the handshake line there, then answers each request line on
// its standard input with one line, and exits at the end of its input.
const (
	// ModeServe is KG_MODE of a serving harness.
	ModeServe = "serve"
	// ServeFDVar names the variable that tells a serving harness its answer descriptor.
	ServeFDVar = "KG_SERVE_FD"
	// ServeSchema is the handshake's "serve" value.
	ServeSchema = "kernel-gate/serve/v1"
	// maxAnswerBytes caps one answer line, as every JSON input is capped.
	maxAnswerBytes = 64 << 20
	// serveExitGrace is how long a server may take to exit once its input is closed.
	serveExitGrace = 30 * time.Second
	// lastWordsGrace is how long a line a server wrote just before it exited may take to
	// arrive once its exit is seen.
	lastWordsGrace = 2 * time.Second
)

// ServeRequest is one request line: time round Round with Samples launches of each
// kernel × shape named (the ones the harness set up when Shapes or Kernels is absent).
type ServeRequest struct {
	Round   int      `json:"round"`
	Samples int      `json:"samples"`
	Shapes  []string `json:"shapes,omitempty"`
	Kernels []string `json:"kernels,omitempty"`
}

// serveHello is the handshake line.
type serveHello struct {
	Serve string `json:"serve"`
}

// serveAnswer is one answer line: the round it answers and that round's harness file (a
// whole kernel-gate/bench/v1 file, its rounds_us holding this round).
type serveAnswer struct {
	Round *int            `json:"round"`
	File  json.RawMessage `json:"file"`
}

// server is one running serving harness.
type server struct {
	side     Side
	proc     *procgroup.Proc
	lines    chan []byte
	quit     chan struct{}
	mu       sync.Mutex
	readErr  error // why lines was closed before EOF (an answer too long, a read error)
	lifetime int   // 1-based: which of this side's serving processes it is
	answered int   // rounds answered, the warm-up included
	// warm is its warm-up round's answer: the run's warm-up round when it is the first
	// process of its side.
	warm *benchfile.File
}

// serveEnv is a serving harness's environment. KG_OUT names a file in the work directory:
// a harness that does not know serve mode and writes a file anyway writes it there.
func serveEnv(environ, extra, shapes []string, samples int, out string) []string {
	env := harnessEnv(environ, extra, shapes, samples, out)
	for i, v := range env {
		if v == "KG_MODE="+benchfile.ModeBench {
			env[i] = "KG_MODE=" + ModeServe
		}
	}
	return append(env, ServeFDVar+"="+strconv.Itoa(procgroup.AnswerFD))
}

// startServer starts one side's serving harness, waits for its handshake and asks it for
// a warm-up round (round 0, discarded: a fresh process's first round is not timed).
// notServing is set (and the process gone) when it exited or closed its answer descriptor
// before the handshake: a harness that does not serve. A hung setup, a handshake that is
// not one, a warm-up round it fails, or a process that cannot be started is a Failure.
// It only reads r: several start side by side.
func (r *runner) startServer(ctx context.Context, side Side, lifetime, firstRound int) (st started) {
	i := side.index()
	c := r.cmds[i]
	out := filepath.Join(r.work, fmt.Sprintf("%s-serve-%d.json", side, lifetime))
	var logw io.Writer
	if l := r.sideLogs[i]; l != nil {
		l.header("==> kernel-gate A/B run: %s, serving process %d (from round %d; its lines marked [%d]), KG_MODE=serve: %s <==", side, lifetime, firstRound, lifetime, describeCommand(c))
		logw = l.process(lifetime)
	}
	start := time.Now()
	p, err := procgroup.Start(ctx, procgroup.StartSpec{Argv: c.Argv, Dir: c.Dir, LogCap: runLogBytes, Log: logw, TailBytes: tailBytes,
		Env: serveEnv(append(slices.Clone(r.o.Environ), c.Env...), r.set.Env, r.set.Shapes, r.set.Samples, out)})
	if err != nil {
		if ctx.Err() != nil {
			return started{err: ctx.Err()}
		}
		return started{fail: &Failure{Side: side, Stage: "run", Round: firstRound, Why: fmt.Sprintf("its serving process %d %v", lifetime, err), Log: r.logPaths[i]}}
	}
	s := &server{side: side, proc: p, lines: make(chan []byte, 1), quit: make(chan struct{}), lifetime: lifetime}
	go s.read()
	line, gone, why, err := s.next(ctx, start.Add(r.set.Timeout), r.set.Timeout)
	st.setup = time.Since(start)
	if err != nil {
		s.kill()
		st.err = err
		return st
	}
	failed := func(why, output string) started {
		st.fail = &Failure{Side: side, Stage: "run", Round: firstRound, Why: fmt.Sprintf("its serving process %d ", lifetime) + why, Output: output, Log: r.logPaths[i]}
		switch {
		case outOfGPUMemory(st.fail.Why):
			st.oom = st.fail.Why
		case outOfGPUMemory(output):
			st.oom = st.fail.Why + lastOutput(output)
		}
		return st
	}
	switch {
	case gone:
		o := s.kill()
		st.notServing = why + lastOutput(o.Output)
		if outOfGPUMemory(o.Output) {
			st.oom = st.notServing
		}
		return st
	case why != "":
		o := s.kill()
		return failed(why, o.Output)
	}
	var h serveHello
	if err := decodeStrict(line, &h); err != nil || h.Serve != ServeSchema {
		o := s.kill()
		return failed(fmt.Sprintf("wrote %s before its handshake, not {\"serve\": %q}", quoteLine(line), ServeSchema), o.Output)
	}
	warmStart := time.Now()
	f, why, output, err := s.ask(ctx, r.request(0), r.set.RoundTimeout)
	st.warmup = time.Since(warmStart)
	switch {
	case err != nil:
		st.err = err
		return st
	case why != "":
		return failed("failed its warm-up round: "+why, output)
	}
	s.warm = f
	st.s = s
	for _, res := range f.Results {
		if outOfGPUMemory(res.Error) {
			st.oom = fmt.Sprintf("its warm-up answer for %s × %s: %s", res.Kernel, res.Shape, strings.TrimSpace(res.Error))
			break
		}
	}
	return st
}

// outOfGPUMemory: a harness's error or output says the GPU ran out of memory (the CUDA
// runtime's "out of memory", PyTorch's "CUDA out of memory" and OutOfMemoryError, the
// driver's CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation).
func outOfGPUMemory(text string) bool {
	t := strings.ToLower(text)
	for _, w := range []string{"out of memory", "out_of_memory", "outofmemory", "cudaerrormemoryallocation"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// lastOutput quotes the end of what a process printed, for a note.
func lastOutput(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	// The harness's own warnings first: they say why. The same lines as a failed run's
	// tail keeps (procgroup.TailBuffer.Keep).
	warnings := procgroup.TailBuffer{Keep: procgroup.HarnessWarning}
	warnings.Write([]byte(out + "\n"))
	var warned []string
	for _, l := range warnings.Kept()[:min(len(warnings.Kept()), 4)] {
		warned = append(warned, msgtext.Clip(l, 300))
	}
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	last := msgtext.Clip(out, 300)
	if len(warned) > 0 && !strings.HasPrefix(out, procgroup.HarnessWarning) {
		return "; its own warnings: " + strings.Join(warned, " / ") + "; its last output: " + last
	}
	return "; its last output: " + last
}

// read passes the server's answer lines on, one at a time, until EOF, a read error or quit.
func (s *server) read() {
	defer close(s.lines)
	br := bufio.NewReaderSize(s.proc.Answers(), 64<<10)
	for {
		line, err := readLine(br, maxAnswerBytes)
		if len(line) > 0 {
			select {
			case s.lines <- line:
			case <-s.quit:
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.mu.Lock()
				s.readErr = err
				s.mu.Unlock()
			}
			return
		}
	}
}

// errLineTooLong is an answer past maxAnswerBytes; errNoNewline a last line cut short.
var (
	errLineTooLong = fmt.Errorf("an answer line longer than %d MiB", maxAnswerBytes>>20)
	errNoNewline   = errors.New("a last line without its newline (the answer was cut short)")
)

// readLine reads one line (without its newline) of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > max+1 {
			return nil, errLineTooLong
		}
		buf = append(buf, frag...)
		switch {
		case err == nil:
			return bytes.TrimRight(buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return nil, errNoNewline
		}
		return nil, err
	}
}

// next waits until deadline for the server's next non-empty line. gone is set when it
// exited or closed its answer descriptor first (why says how); why alone, when it did not
// answer in time (it is then killed; timeout is the bound the message names) or its
// answers cannot be read. The error is only for ctx.
func (s *server) next(ctx context.Context, deadline time.Time, timeout time.Duration) (line []byte, gone bool, why string, err error) {
	t := time.NewTimer(max(time.Until(deadline), 0))
	defer t.Stop()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return s.ended()
			}
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			return l, false, "", nil
		case <-s.proc.Done():
			// A line written just before it exited may still be in the pipe.
			lw := time.NewTimer(lastWordsGrace)
			select {
			case l, ok := <-s.lines:
				lw.Stop()
				if ok && len(bytes.TrimSpace(l)) > 0 {
					return l, false, "", nil
				}
			case <-lw.C:
			}
			return s.ended()
		case <-t.C:
			o := s.kill()
			return nil, false, fmt.Sprintf("did not answer within %s: killed with its process group%s", timeout, lastOutput(o.Output)), nil
		case <-ctx.Done():
			return nil, false, "", ctx.Err()
		}
	}
}

// ended says how a server whose answers ended is gone: its exit, or a descriptor closed
// while it runs on (then it is killed).
func (s *server) ended() ([]byte, bool, string, error) {
	s.mu.Lock()
	rerr := s.readErr
	s.mu.Unlock()
	if rerr != nil {
		s.kill()
		return nil, false, "wrote " + rerr.Error() + " to " + ServeFDVar, nil
	}
	t := time.NewTimer(lastWordsGrace)
	defer t.Stop()
	select {
	case <-s.proc.Done():
		o := s.proc.Outcome()
		why := o.Why
		if why == "" {
			why = "exited with status 0"
		}
		return nil, true, why, nil
	case <-t.C:
		s.kill()
		return nil, true, "closed its answer descriptor (" + ServeFDVar + ") but did not exit: killed with its process group", nil
	}
}

// kill ends the server and its reader.
func (s *server) kill() procgroup.Outcome {
	s.stopReader()
	return s.proc.Kill()
}

func (s *server) stopReader() {
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
}

// stop closes the server's input and waits for it to exit; why is set when it had to be
// killed or exited other than with status 0.
func (s *server) stop() (why, output string) {
	o, exited := s.proc.Close(serveExitGrace)
	s.stopReader()
	switch {
	case !exited:
		return fmt.Sprintf("did not exit within %s of the end of its input: killed with its process group", serveExitGrace), o.Output
	case o.Why != "":
		return o.Why + " at the end of its input", o.Output
	}
	return "", ""
}

// ask sends one request and reads the answer: the round's harness file, or why the server
// failed it (it is then gone). The error is only for ctx.
func (s *server) ask(ctx context.Context, req ServeRequest, timeout time.Duration) (f *benchfile.File, why, output string, err error) {
	raw, err := json.Marshal(req)
	if err != nil {
		return nil, "", "", err
	}
	// The write has the round's deadline too: a harness that answers without reading its
	// requests would fill the pipe and block it.
	start := time.Now()
	wrote := make(chan error, 1)
	go func() {
		_, err := s.proc.Stdin().Write(append(raw, '\n'))
		wrote <- err
	}()
	t := time.NewTimer(timeout)
	select {
	case werr := <-wrote:
		t.Stop()
		if werr != nil {
			// Its input is closed: it has exited, or is about to.
			_, _, gwhy, err := s.ended()
			if err != nil {
				return nil, "", "", err
			}
			o := s.kill()
			return nil, "stopped reading its requests (" + gwhy + ")", o.Output, nil
		}
	case <-t.C:
		o := s.kill()
		return nil, fmt.Sprintf("did not read its request within %s: killed with its process group", timeout), o.Output, nil
	case <-ctx.Done():
		t.Stop()
		s.kill()
		return nil, "", "", ctx.Err()
	}
	line, gone, gwhy, err := s.next(ctx, start.Add(timeout), timeout)
	switch {
	case err != nil:
		s.kill()
		return nil, "", "", err
	case gone:
		o := s.kill()
		return nil, gwhy + " before it answered", o.Output, nil
	case gwhy != "":
		o := s.kill()
		return nil, gwhy, o.Output, nil
	}
	f, why = parseAnswer(line, req.Round)
	if why != "" {
		o := s.kill()
		return nil, "answered badly: " + why + ": its answers cannot be trusted", o.Output, nil
	}
	s.answered++
	return f, "", "", nil
}

// parseAnswer reads one answer line to round: the round's harness file, or why the line
// is not one.
func parseAnswer(line []byte, round int) (*benchfile.File, string) {
	var a serveAnswer
	if err := decodeStrict(line, &a); err != nil {
		return nil, fmt.Sprintf("%s is not an answer (%v)", quoteLine(line), err)
	}
	switch {
	case a.Round == nil:
		return nil, fmt.Sprintf("%s has no \"round\"", quoteLine(line))
	case *a.Round != round:
		return nil, fmt.Sprintf("it answered round %d when asked for round %d", *a.Round, round)
	case len(a.File) == 0 || string(a.File) == "null":
		return nil, fmt.Sprintf("its answer to round %d has no \"file\"", round)
	}
	f, err := benchfile.Read(bytes.NewReader(a.File))
	if err != nil {
		return nil, fmt.Sprintf("its answer to round %d holds an invalid harness file: %v", round, err)
	}
	return f, ""
}

// decodeStrict decodes one JSON object: a key given twice, an unknown key or anything after
// the object is an error.
func decodeStrict(line []byte, v any) error {
	return strictjson.UnmarshalKnown(line, v, strictjson.Options{Exact: []string{"extra"}})
}

// quoteLine quotes the start of a line for a message.
func quoteLine(line []byte) string {
	return strconv.Quote(msgtext.Clip(strings.ToValidUTF8(string(line), "\uFFFD"), 200))
}

// started is one startServer's outcome: the server, or why not; setup is its start to
// handshake, warmup its warm-up round.
type started struct {
	s             *server
	notServing    string
	fail          *Failure
	err           error
	setup, warmup time.Duration
	oom           string // how its output, failure or warm-up answer said the GPU ran out of memory; "" if none did
}

// startAll starts speedup.servers serving processes of each given side, all side by side
// (nothing is timed while they set up and warm up), waits for every one, and counts them
// in the sides' data. out[i] holds side i's processes, in lifetime order.
func (r *runner) startAll(ctx context.Context, sides []int, firstRound int) [3][]started {
	n := max(r.set.Servers, 1)
	var out [3][]started
	var wg sync.WaitGroup
	for _, i := range sides {
		out[i] = make([]started, n)
		for k := range n {
			lifetime := r.lifetimes[i] + 1 + k
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i][k] = r.startServer(ctx, sideOf(i), lifetime, firstRound)
			}()
		}
	}
	wg.Wait()
	for _, i := range sides {
		r.lifetimes[i] += n
		sd := &r.sides[i]
		for _, st := range out[i] {
			sd.Starts++
			sd.SetupSeconds += st.setup.Seconds()
			sd.RoundSeconds += st.warmup.Seconds()
			if st.setup > 0 {
				sd.Setups = append(sd.Setups, millis(st.setup.Seconds()))
			}
		}
	}
	return out
}

// firstProblem is the first failure, error or process that does not serve among a start's
// outcomes, with the side it was.
func firstProblem(res [3][]started, sides []int) (started, int, bool) {
	for _, i := range sides {
		for _, st := range res[i] {
			if st.err != nil || st.fail != nil {
				return st, i, true
			}
		}
	}
	for _, i := range sides {
		for _, st := range res[i] {
			if st.notServing != "" {
				return st, i, true
			}
		}
	}
	return started{}, 0, false
}

// keep makes the started servers of the given sides the current ones.
func (r *runner) keep(res [3][]started, sides []int) {
	for _, i := range sides {
		r.srv[i] = r.srv[i][:0]
		for _, st := range res[i] {
			if st.s != nil {
				r.srv[i] = append(r.srv[i], st.s)
			}
		}
	}
}

// sidesPresent are base, head and, when there is one, the reference.
func (r *runner) sidesPresent() []int {
	if len(r.cmds[2].Argv) > 0 {
		return []int{0, 1, 2}
	}
	return []int{0, 1}
}

// startServing decides, before the warm-up round, which sides serve their rounds
// (speedup.serve): with auto each harness is started with KG_MODE=serve, and base and head
// serve when both answer the handshake (a harness that exits first does not serve, and
// then neither does the other: both sides are timed the same way); the reference serves
// when it answers. With true every side must serve. A failed start fails the run.
func (r *runner) startServing(ctx context.Context) (*Failure, error) {
	setting := cmp.Or(r.set.Serve, ServeAuto)
	sd := &ServeData{Setting: setting}
	r.data.Serve = sd
	present := r.sidesPresent()
	defer func() {
		for _, i := range present {
			r.sides[i].Side = sideOf(i)
			r.sides[i].Serving = len(r.srv[i]) > 0
		}
	}()
	if setting == ServeOff {
		return nil, nil
	}
	res := r.startAll(ctx, present, 0)
	r.keep(res, present)
	if n := max(r.set.Servers, 1); n > 1 {
		if what, ok := firstOOM(res, present); ok {
			// Each process holds a CUDA context and its inputs: on a small GPU a set of
			// them may not fit where one a side does. Nothing has been timed yet.
			r.killServers()
			r.set.Servers = 1
			r.warn("servers-oom", result.Warning, MetricServe, "",
				"%d serving processes a side (speedup.servers: %d), started side by side, ran out of GPU memory (%s): the run went on with 1 a side, each answering at most %d rounds; set speedup.servers: 1 to skip the first attempt",
				n, n, what, max(r.set.RestartEvery, 1))
			res = r.startAll(ctx, present, 0)
			r.keep(res, present)
		}
	}
	for _, i := range present {
		for _, st := range res[i] {
			if st.err != nil || st.fail != nil {
				r.killServers()
				return st.fail, st.err
			}
		}
	}
	for _, i := range present {
		for _, st := range res[i] {
			if st.notServing == "" {
				continue
			}
			// A side serves only when every one of its processes does.
			r.stopSide(i)
			r.sides[i].NotServing = "its handshake process (KG_MODE=serve) " + st.notServing
			if setting == ServeOn {
				r.killServers()
				return &Failure{Side: sideOf(i), Stage: "run", Round: 0, Log: r.logPaths[i],
					Why: "speedup.serve is true, but it does not serve rounds: started with KG_MODE=serve, it " + st.notServing}, nil
			}
			break
		}
	}
	if len(r.srv[0]) == 0 || len(r.srv[1]) == 0 {
		for _, i := range []int{0, 1} {
			if len(r.srv[i]) > 0 {
				r.stopSide(i)
				r.sides[i].NotServing = fmt.Sprintf("it serves, but the %s harness does not, and both sides are timed the same way", sideOf(1-i))
			}
		}
	}
	if fail := r.sameDevices(present, 0); fail != nil {
		r.killServers()
		return fail, nil
	}
	sd.Serving = len(r.srv[0]) > 0 && len(r.srv[1]) > 0
	if sd.Serving {
		sd.RestartEvery = max(r.set.RestartEvery, 1)
		sd.Servers = max(r.set.Servers, 1)
	}
	r.noteServing()
	r.noteBytecode(res, present)
	return nil, nil
}

// slowSetup is a serving process's start-up that is worth a hint when Python may be
// compiling its packages at every start.
const slowSetup = 2 * time.Second

// mentionsPython: a command that runs Python, as far as its words say (python3 x.py,
// env ... python, sh -c "python3 ...", ./harness.py).
func mentionsPython(c Command) bool {
	for _, w := range commandWords(c) {
		if w = strings.ToLower(w); strings.Contains(w, "python") || strings.Contains(w, ".py") {
			return true
		}
	}
	return false
}

// commandWords are the words a command is written in, as sh reads them (shellcmd.Words);
// a line that does not parse is one word.
func commandWords(c Command) []string {
	line := describeCommand(c)
	if w := shellcmd.Words(line); w != nil {
		return w
	}
	return []string{line}
}

// setsBytecode: the command's own words set PYTHONPYCACHEPREFIX or PYTHONDONTWRITEBYTECODE
// (NAME=VALUE python3 ..., env NAME=VALUE python3 ..., sh -c "NAME=VALUE python3 ..."),
// which the environment kernel-gate sees does not show.
func setsBytecode(c Command) bool {
	for _, w := range commandWords(c) {
		if strings.Contains(w, "PYTHONPYCACHEPREFIX=") || strings.Contains(w, "PYTHONDONTWRITEBYTECODE=") {
			return true
		}
	}
	return false
}

// noteBytecode says, once, when a side's serving processes took long to set up while
// Python may not keep bytecode: with PYTHONDONTWRITEBYTECODE set and no
// PYTHONPYCACHEPREFIX, a package installed without its bytecode (torch on the machine
// docs/speedup-serving.md measured: 0 of 2141 modules) is compiled again at every start,
// about half of a PyTorch harness's start-up there.
func (r *runner) noteBytecode(res [3][]started, sides []int) {
	for _, i := range sides {
		if !mentionsPython(r.cmds[i]) || setsBytecode(r.cmds[i]) {
			continue
		}
		env := append(append(slices.Clone(r.o.Environ), r.cmds[i].Env...), r.set.Env...)
		dont, _ := LookupEnv(env, "PYTHONDONTWRITEBYTECODE")
		prefix, _ := LookupEnv(env, "PYTHONPYCACHEPREFIX")
		if dont == "" || prefix != "" {
			continue
		}
		for _, st := range res[i] {
			if st.s != nil && st.setup >= slowSetup {
				r.warn("bytecode", result.Notice, MetricServe, "",
					"the %s harness's serving processes took %.1f s to set up, and PYTHONDONTWRITEBYTECODE is set without PYTHONPYCACHEPREFIX: if its Python packages were installed without bytecode, every start compiles them again; setting speedup.env PYTHONPYCACHEPREFIX to a directory kept between runs makes later starts read it (docs/speedup-serving.md)",
					sideOf(i), st.setup.Seconds())
				return
			}
		}
	}
}

// stopSide ends side i's serving processes: it will run once per round.
func (r *runner) stopSide(i int) {
	for _, s := range r.srv[i] {
		s.stop()
	}
	r.srv[i] = nil
}

// noteServing says how the rounds are taken, once.
func (r *runner) noteServing() {
	var parts []string
	for _, i := range r.sidesPresent() {
		switch {
		case len(r.srv[i]) > 0 && max(r.set.Servers, 1) == 1:
			parts = append(parts, fmt.Sprintf("%s serves its rounds (KG_MODE=serve: one process at a time, each answering at most %d rounds, then a fresh one)",
				sideOf(i), max(r.set.RestartEvery, 1)))
		case len(r.srv[i]) > 0:
			parts = append(parts, fmt.Sprintf("%s serves its rounds (KG_MODE=serve: %d processes started side by side answer in turn, each at most %d rounds, then %d fresh ones)",
				sideOf(i), r.set.Servers, max(r.set.RestartEvery, 1), r.set.Servers))
		case r.sides[i].NotServing != "":
			parts = append(parts, fmt.Sprintf("%s runs once per round: %s", sideOf(i), r.sides[i].NotServing))
		}
	}
	if len(parts) > 0 {
		r.warn("serve", result.Notice, MetricServe, "", "%s", strings.Join(parts, "; "))
		r.progress("%s", strings.Join(parts, "; "))
	}
}

// restart stops every serving process and starts new ones, before round; a process that
// does not end cleanly, or a new one that does not serve, fails the run.
//
// The ending processes tear down (an interpreter, a CUDA context) while the new ones set
// up: nothing is timed until both have finished, as when the setups alone run side by
// side, and the teardown no longer adds to every restart's wall time.
func (r *runner) restart(ctx context.Context, round int) (*Failure, error) {
	old := r.srv
	r.srv = [3][]*server{}
	stopped := make(chan *Failure, 1)
	go func() { stopped <- stopEach(old, round, r.logPaths) }()
	fail, oom, err := r.startNext(ctx, round, true)
	stopFail := <-stopped
	if stopFail != nil && fail == nil && err == nil {
		r.killServers()
		return stopFail, nil
	}
	if oom != "" && fail == nil && err == nil {
		// The old set's teardown and the new set's setup together did not fit in GPU
		// memory: the new set again, now that the old one has ended.
		r.warn("restart-oom", result.Warning, MetricServe, "",
			"the serving processes started for round %d ran out of GPU memory while the previous ones ended (%s): they were started again once those had exited", round, oom)
		fail, _, err = r.startNext(ctx, round, false)
	}
	return fail, err
}

// startNext starts each serving side's next processes, before round. With retryOOM, a
// start that ran out of GPU memory is killed and said (oom) instead of failing the run.
func (r *runner) startNext(ctx context.Context, round int, retryOOM bool) (fail *Failure, oom string, err error) {
	var serving []int
	for _, i := range r.sidesPresent() {
		if i == 2 && r.refStopped() {
			continue // its old set ends with the others; no new one
		}
		if r.sides[i].Serving {
			serving = append(serving, i)
		}
	}
	res := r.startAll(ctx, serving, round)
	r.keep(res, serving)
	if what, ok := firstOOM(res, serving); ok && retryOOM {
		r.killServers()
		return nil, what, nil
	}
	st, i, bad := firstProblem(res, serving)
	switch {
	case !bad:
		if fail := r.sameDevices(serving, round); fail != nil {
			r.killServers()
			return fail, "", nil
		}
		return nil, "", nil
	case st.err != nil || st.fail != nil:
		r.killServers()
		return st.fail, "", st.err
	}
	r.killServers()
	return &Failure{Side: sideOf(i), Stage: "run", Round: round, Log: r.logPaths[i],
		Why: fmt.Sprintf("a serving process started for round %d did not serve: it %s", round, st.notServing)}, "", nil
}

// firstOOM says which started process ran out of GPU memory first, and how it said so.
func firstOOM(res [3][]started, sides []int) (string, bool) {
	for _, i := range sides {
		for _, st := range res[i] {
			if st.oom != "" {
				return fmt.Sprintf("the %s harness: %s", sideOf(i), msgtext.Clip(st.oom, 300)), true
			}
		}
	}
	return "", false
}

// sameDevices checks the device each serving process's warm-up round reported: every one
// must be the device its side reported first.
func (r *runner) sameDevices(sides []int, round int) *Failure {
	for _, i := range sides {
		for _, s := range r.srv[i] {
			if why := r.sameDevice(i, s.warm.Device); why != "" {
				return &Failure{Side: sideOf(i), Stage: "run", Round: round, Log: r.logPaths[i],
					Why: fmt.Sprintf("its serving process (%d of this side, pid %d), in its warm-up round: %s", s.lifetime, s.proc.Pid(), why)}
			}
		}
	}
	return nil
}

// stopServers ends every serving process (side by side): each must exit with status 0
// at the end of its input; the first that does not is the Failure (the others are
// stopped all the same).
func (r *runner) stopServers(round int) *Failure {
	f := stopEach(r.srv, round, r.logPaths)
	r.srv = [3][]*server{}
	return f
}

// stopEach ends the given serving processes side by side, as stopServers says.
func stopEach(srv [3][]*server, round int, logPaths [3]string) *Failure {
	var fails [3][]*Failure
	var wg sync.WaitGroup
	for i, pool := range srv {
		fails[i] = make([]*Failure, len(pool))
		for k, s := range pool {
			if s == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if why, out := s.stop(); why != "" {
					fails[i][k] = &Failure{Side: s.side, Stage: "run", Round: round, Output: out, Log: logPaths[i],
						Why: fmt.Sprintf("its serving process (%d of this side, pid %d) %s", s.lifetime, s.proc.Pid(), why)}
				}
			}()
		}
	}
	wg.Wait()
	for _, side := range fails {
		for _, f := range side {
			if f != nil {
				return f
			}
		}
	}
	return nil
}

// killServers kills every serving process: the run has failed or is cancelled.
func (r *runner) killServers() {
	for i, pool := range r.srv {
		for _, s := range pool {
			if s != nil {
				s.kill()
			}
		}
		r.srv[i] = nil
	}
}
