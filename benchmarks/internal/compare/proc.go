package compare

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tarscomm/tarscomm/benchmarks/internal/result"
)

// serverProc is an echo server running as a child process.
type serverProc struct {
	name   string
	addr   string
	pid    int
	cmd    *exec.Cmd
	stdin  io.WriteCloser // "stats" lines to the server
	allocs chan string    // its ALLOC lines, the answers
	exited chan struct{}  // closed when the process has exited
}

// startServer starts bin/echoserver for server on a free loopback port and waits for its
// "echoserver: fw=... addr=... pid=..." line. The server exits by itself after lifetime.
func startServer(bin, server string, lifetime time.Duration, stderr io.Writer) (*serverProc, error) {
	args := append(serverFlags(server), "-addr", "127.0.0.1:0", "-lifetime", lifetime.String())
	cmd := exec.Command(bin+"/echoserver", args...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &serverProc{name: server, cmd: cmd, stdin: in, allocs: make(chan string, 4), exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		for sc.Scan() { // ALLOC lines; the rest (TarsGo's occasional stdout) is dropped
			if line := sc.Text(); strings.Contains(line, result.AllocPrefix) {
				select {
				case s.allocs <- line:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, out) // after a line too long for the scanner: keep it from blocking
	}()
	go func() { _ = cmd.Wait(); close(s.exited) }()
	t := time.NewTimer(60 * time.Second)
	defer t.Stop()
	select {
	case line, ok := <-lines:
		if ok {
			s.addr, s.pid, err = parseReady(line)
			if err == nil {
				return s, nil
			}
		} else {
			err = errors.New("exited before it was ready")
		}
	case <-t.C:
		err = errors.New("not ready after 60s")
	}
	s.stop()
	return nil, fmt.Errorf("compare: server %s: %w", server, err)
}

// parseReady reads "echoserver: fw=NAME addr=HOST:PORT pid=PID".
func parseReady(line string) (addr string, pid int, err error) {
	for _, f := range strings.Fields(line) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "addr":
			addr = v
		case "pid":
			pid, err = strconv.Atoi(v)
		}
	}
	if addr == "" || pid <= 0 || err != nil {
		return "", 0, fmt.Errorf("unexpected first line %q", line)
	}
	return addr, pid, nil
}

// allocTimeout bounds the wait for a server's answer to "stats".
const allocTimeout = 5 * time.Second

// heapAllocs asks the server for its heap allocations so far (a line "stats" on its stdin) and
// waits for its ALLOC line.
func (s *serverProc) heapAllocs() (result.Alloc, error) {
drain: // answers that came too late for an earlier question
	for {
		select {
		case <-s.allocs:
		default:
			break drain
		}
	}
	if _, err := io.WriteString(s.stdin, "stats\n"); err != nil {
		return result.Alloc{}, fmt.Errorf("server %s: %w", s.name, err)
	}
	t := time.NewTimer(allocTimeout)
	defer t.Stop()
	select {
	case line := <-s.allocs:
		return result.ParseAlloc(line)
	case <-s.exited:
		return result.Alloc{}, fmt.Errorf("server %s exited", s.name)
	case <-t.C:
		return result.Alloc{}, fmt.Errorf("server %s: no answer to stats in %v", s.name, allocTimeout)
	}
}

func (s *serverProc) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// stop asks the server to exit (SIGTERM) and kills it if it has not within 5 s.
func (s *serverProc) stop() {
	if !s.alive() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-s.exited:
	case <-t.C:
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Outcome is what one run produced.
type Outcome struct {
	Run    Run
	OK     bool          // a RESULT line was printed
	Result result.Result // valid if OK
	Note   string        // the load generator's stderr (errors), or why the run failed

	// The server process's heap allocations per call over the measured phase (objects, bytes),
	// if ServerMeasured: read from the server at each edge of the phase (loadgen -sync).
	ServerMeasured            bool
	ServerAllocs, ServerBytes float64
}

// loadgenTimeout bounds one run: warm-up, measured phase, the last calls' timeout, and time to
// connect and exit.
func loadgenTimeout(t Timing) time.Duration {
	return t.Warmup + t.Duration + t.Timeout + 30*time.Second
}

// runLoadgen runs bin/loadgen once against srv.
func runLoadgen(o Options, run Run, srv *serverProc) Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), loadgenTimeout(run.Timing))
	defer cancel()
	args := append(clientFlags(run.Row.Client),
		"-addr", srv.addr,
		"-c", strconv.Itoa(run.Cell.C),
		"-size", strconv.Itoa(run.Cell.Size),
		"-d", run.Timing.Duration.String(),
		"-warmup", run.Timing.Warmup.String(),
		"-timeout", run.Timing.Timeout.String(),
		"-srvpid", strconv.Itoa(srv.pid),
		"-sync",
	)
	cmd := exec.CommandContext(ctx, o.Bin+"/loadgen", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stderr = &stderr
	edges, err := runSynced(cmd, &stdout, srv.heapAllocs)
	out := Outcome{Run: run, Note: strings.TrimSpace(stderr.String())}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, result.Prefix) {
			r, perr := result.Parse(line)
			if perr != nil {
				out.Note = strings.TrimSpace(out.Note + "\n" + perr.Error())
				continue
			}
			out.OK, out.Result = true, r
		}
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if out.OK && strings.HasPrefix(line, result.MemPrefix) {
			if perr := out.Result.ParseMem(line); perr != nil {
				out.Note = strings.TrimSpace(out.Note + "\n" + perr.Error())
			}
		}
	}
	if out.OK {
		out.serverAllocs(edges)
	}
	if !out.OK {
		why := "no result line"
		if err != nil {
			why = err.Error()
		}
		if ctx.Err() != nil {
			why = fmt.Sprintf("killed after %v", loadgenTimeout(run.Timing))
		}
		out.Note = strings.TrimSpace(why + "\n" + out.Note)
	}
	return out
}

// edgeAllocs is what the server had allocated at each edge of the measured phase.
type edgeAllocs struct {
	start, end   result.Alloc
	gotS, gotE   bool
	errS, errEnd error
}

// runSynced runs cmd (a load generator with -sync), copying its standard output to stdout; at
// each PHASE line it reads the server's allocations (heapAllocs), then lets the load generator
// go on.
func runSynced(cmd *exec.Cmd, stdout *bytes.Buffer, heapAllocs func() (result.Alloc, error)) (edgeAllocs, error) {
	var e edgeAllocs
	pout, err := cmd.StdoutPipe()
	if err != nil {
		return e, err
	}
	pin, err := cmd.StdinPipe()
	if err != nil {
		return e, err
	}
	if err := cmd.Start(); err != nil {
		return e, err
	}
	sc := bufio.NewScanner(pout)
	for sc.Scan() {
		line := sc.Text()
		stdout.WriteString(line + "\n")
		phase, ok := strings.CutPrefix(line, result.PhasePrefix)
		if !ok {
			continue
		}
		a, err := heapAllocs()
		switch phase {
		case "start":
			e.start, e.gotS, e.errS = a, err == nil, err
		case "end":
			e.end, e.gotE, e.errEnd = a, err == nil, err
		}
		_, _ = io.WriteString(pin, "\n")
	}
	_, _ = io.Copy(io.Discard, pout)
	pin.Close()
	return e, cmd.Wait()
}

// serverAllocs sets the server's allocations per call from what it had allocated at the edges
// of the measured phase, or notes why they are unknown.
func (o *Outcome) serverAllocs(e edgeAllocs) {
	calls := float64(o.Result.Calls)
	switch {
	case e.errS != nil || e.errEnd != nil:
		o.Note = strings.TrimSpace(o.Note + "\nserver allocations not measured: " + errors.Join(e.errS, e.errEnd).Error())
	case !e.gotS || !e.gotE || calls == 0 || e.end.Bytes < e.start.Bytes:
		// no PHASE lines, or no calls: nothing to divide
	default:
		o.ServerMeasured = true
		o.ServerAllocs = float64(e.end.Mallocs-e.start.Mallocs) / calls
		o.ServerBytes = float64(e.end.Bytes-e.start.Bytes) / calls
	}
}

// build compiles the two commands into bin.
func build(goCmd, dir, bin string, log io.Writer) error {
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	cmd := exec.Command(goCmd, "build", "-o", bin+"/", "./cmd/echoserver", "./cmd/loadgen")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("compare: go build: %w", err)
	}
	return nil
}
