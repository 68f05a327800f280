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
	exited chan struct{} // closed when the process has exited
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
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &serverProc{name: server, cmd: cmd, exited: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, out) // keep TarsGo's occasional stdout from blocking it
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
	)
	cmd := exec.CommandContext(ctx, o.Bin+"/loadgen", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
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
