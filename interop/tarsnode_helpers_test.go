package interop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TarsNode, the TARS framework for Node.js, as a peer: testdata/tarsnode holds a servant and a
// proxy of EchoTars written for its @tars/rpc (echotars.js), a server (server.js) and a client
// that runs steps (client.js). The first test that needs them installs the pinned npm packages
// (package-lock.json) into a directory of the test binary's; node and npm must be on PATH
// (.ci/run installs Debian's nodejs and npm where they are not).

// tarsNode is that directory, made once; testMain removes it.
var tarsNode struct {
	once sync.Once
	dir  string
	err  error
}

// tarsNodeDir returns the directory where server.js and client.js run, installing it first.
func tarsNodeDir(t *testing.T) string {
	t.Helper()
	tarsNode.once.Do(func() { tarsNode.err = installTarsNode(tarsNode.dir) })
	if tarsNode.err != nil {
		t.Fatal(tarsNode.err)
	}
	return tarsNode.dir
}

// installTarsNode copies testdata/tarsnode to dir and installs its packages there with npm ci.
func installTarsNode(dir string) error {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the TarsNode interop tests need %s on PATH (Debian: apt-get install nodejs npm): %v", tool, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []string{"package.json", "package-lock.json", "echotars.js", "server.js", "client.js"} {
		b, err := os.ReadFile(filepath.Join("testdata", "tarsnode", f))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci of testdata/tarsnode: %v\n%s", err, out)
	}
	return nil
}

// nodeServer is a running server.js.
type nodeServer struct {
	port   int
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *lockedBuffer // stderr
	exited chan struct{}
}

// startNodeServer starts TarsNode's server serving EchoTars as servant over proto ("tcp" or
// "udp") on a loopback port it picks; t.Cleanup stops it.
func startNodeServer(t *testing.T, servant, proto string) *nodeServer {
	t.Helper()
	dir := tarsNodeDir(t)
	s := &nodeServer{out: new(lockedBuffer), exited: make(chan struct{})}
	s.cmd = exec.Command("node", "--no-warnings", "server.js", servant, proto)
	s.cmd.Dir = dir
	s.cmd.Stderr = s.out
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ports := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				ports <- p
			}
		}
		close(ports)
	}()
	go func() {
		_ = s.cmd.Wait() // after the scanner has read stdout to its end
		close(s.exited)
	}()
	t.Cleanup(func() { s.stop(t) })
	select {
	case p, ok := <-ports:
		if s.port, err = strconv.Atoi(p); !ok || err != nil {
			t.Fatalf("TarsNode server did not say its port (%q, %v): %s", p, err, s.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("TarsNode server did not listen within 30 s: %s", s.out.String())
	}
	return s
}

// endpoint is the server's endpoint in TARS's form.
func (s *nodeServer) endpoint(proto string) string {
	return fmt.Sprintf("%s -h 127.0.0.1 -p %d -t 60000", proto, s.port)
}

// stop closes the server's standard input, which ends it, and kills it if it is still there 10 s
// later; what it wrote to stderr is logged if the test failed.
func (s *nodeServer) stop(t *testing.T) {
	_ = s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	if t.Failed() && s.out.String() != "" {
		t.Logf("TarsNode server stderr:\n%s", s.out.String())
	}
}

// nodeStep is a step of client.js (its doc lists them); nodeResult what it printed for one.
type nodeStep map[string]any

type nodeResult struct {
	Op      string  `json:"op"`
	Ret     *int32  `json:"ret"` // nil if the call failed
	OK      bool    `json:"ok"`
	Size    int     `json:"size"`
	Total   float64 `json:"total"`
	Echoed  string  `json:"echoed"`
	Hex     string  `json:"hex"`
	Code    *int32  `json:"code"` // set if the call failed
	Message string  `json:"message"`
	N       int     `json:"n"`
	Failed  int     `json:"failed"`
}

// runNodeClient runs client.js against proxy with steps and returns a result per step.
func runNodeClient(t *testing.T, proxy string, steps ...nodeStep) []nodeResult {
	t.Helper()
	c := startNodeClient(t, proxy, steps...)
	res := make([]nodeResult, 0, len(steps))
	for range steps {
		res = append(res, c.next(t))
	}
	c.wait(t)
	return res
}

// nodeClient is a running client.js.
type nodeClient struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // its standard output, a line at a time; closed at its end
	stderr *lockedBuffer
	cancel context.CancelFunc
}

// startNodeClient starts client.js against proxy with steps; t.Cleanup ends it.
func startNodeClient(t *testing.T, proxy string, steps ...nodeStep) *nodeClient {
	t.Helper()
	dir := tarsNodeDir(t)
	in, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	c := &nodeClient{lines: make(chan []byte, len(steps)), stderr: new(lockedBuffer), cancel: cancel}
	c.cmd = exec.CommandContext(ctx, "node", "--no-warnings", "client.js", proxy, string(in))
	c.cmd.Dir = dir
	c.cmd.Stderr = c.stderr
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(c.lines)
	}()
	t.Cleanup(func() {
		cancel()
		_ = c.stdin.Close()
	})
	return c
}

// next returns the result of the next step.
func (c *nodeClient) next(t *testing.T) nodeResult {
	t.Helper()
	var line []byte
	var ok bool
	select {
	case line, ok = <-c.lines:
	case <-time.After(60 * time.Second):
	}
	if !ok {
		err := c.cmd.Wait()
		t.Fatalf("client.js ended (%v) before the results of all its steps\n%s", err, c.stderr.String())
	}
	var r nodeResult
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("client.js printed %q: %v\n%s", line, err, c.stderr.String())
	}
	return r
}

// resume answers a wait step.
func (c *nodeClient) resume(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "\n"); err != nil {
		t.Fatalf("client.js: %v\n%s", err, c.stderr.String())
	}
}

// wait waits for client.js to end, which must be a success.
func (c *nodeClient) wait(t *testing.T) {
	t.Helper()
	for line := range c.lines {
		t.Errorf("client.js printed more than its steps' results: %q", line)
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("client.js: %v\n%s", err, c.stderr.String())
	}
}

// called fails the test unless r is a call that returned ret.
func called(t *testing.T, what string, r nodeResult, ret int32) {
	t.Helper()
	if r.Code != nil || r.Ret == nil {
		t.Errorf("%s from TarsNode's client: failed with code %v %q, want ret %d", what, deref(r.Code), r.Message, ret)
	} else if *r.Ret != ret {
		t.Errorf("%s from TarsNode's client: ret %d, want %d", what, *r.Ret, ret)
	}
}

// refused fails the test unless r is a call that failed with code.
func refused(t *testing.T, what string, r nodeResult, code int32) {
	t.Helper()
	if r.Code == nil || *r.Code != code {
		t.Errorf("%s from TarsNode's client: code %v %q (ret %v), want code %d", what, deref(r.Code), r.Message, deref(r.Ret), code)
	}
}

func deref(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}
