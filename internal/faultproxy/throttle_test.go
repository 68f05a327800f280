package faultproxy_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/faultproxy"
)

// TestThrottleDown limits the upstream-to-client half to 2 MiB/s: a 1 MiB echo takes about half
// a second, arrives intact, and the up half is not slowed. Pass lifts the limit.
func TestThrottleDown(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	const rate = 2 << 20
	p.Throttle(faultproxy.Down, rate)
	msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	start := time.Now()
	got, err := roundTrip(c, msg, 10*time.Second)
	took := time.Since(start)
	if err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("throttled round trip: err = %v, equal = %v", err, bytes.Equal(got, msg))
	}
	want := time.Duration(len(msg)) * time.Second / rate
	t.Logf("1 MiB down at 2 MiB/s took %v (want about %v)", took, want)
	// A busy machine only makes it slower: the lower bound is the throttle's promise.
	if took < want*8/10 {
		t.Fatalf("1 MiB through a 2 MiB/s throttle took %v, want at least about %v", took, want)
	}
	if e.received.Load() != int64(len(msg)) {
		t.Fatalf("upstream received %d bytes, want %d", e.received.Load(), len(msg))
	}
	if err := p.Pass(); err != nil {
		t.Fatal(err)
	}
	// 8 MiB would take 4s at the old rate: well under that, the throttle is off.
	big := bytes.Repeat(msg, 8)
	start = time.Now()
	if _, err := roundTrip(c, big, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if took, throttled := time.Since(start), time.Duration(len(big))*time.Second/rate; took > throttled/2 {
		t.Fatalf("8 MiB after Pass took %v, want well under the %v of the lifted throttle", took, throttled)
	}
}

// TestThrottleOffMidChunk lifts a very slow throttle while a chunk trickles: the rest flows at once.
func TestThrottleOffMidChunk(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	p.Throttle(faultproxy.Both, 1000)
	msg := bytes.Repeat([]byte("x"), 20000)
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	p.Throttle(faultproxy.Both, 0)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, len(msg))); err != nil {
		t.Fatalf("reading the echo after the throttle was lifted: %v", err)
	}
}

// TestHangup closes forwarded connections with a FIN: the client reads EOF, not a reset, and new
// connections are forwarded.
func TestHangup(t *testing.T) {
	e := startEcho(t)
	p := newProxy(t, e.addr())
	c := dial(t, p.Addr())
	if _, err := roundTrip(c, []byte("a"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if n := p.Hangup(); n != 1 {
		t.Fatalf("Hangup() = %d, want 1", n)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("read on a hung-up connection: err = %v, want io.EOF", err)
	}
	c2 := dial(t, p.Addr())
	if _, err := roundTrip(c2, []byte("b"), 5*time.Second); err != nil {
		t.Fatalf("after Hangup: %v", err)
	}
}

// TestHeld: a connect to a Held address hangs until Release, then completes (at its SYN
// retransmission) and is forwarded; later connects complete at once.
func TestHeld(t *testing.T) {
	e := startEcho(t)
	h, err := faultproxy.ListenHeld(e.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := net.DialTimeout("tcp", h.Addr(), 200*time.Millisecond); err == nil {
		t.Fatal("connect to a held address succeeded before Release")
	}
	type result struct {
		c   net.Conn
		err error
	}
	dialed := make(chan result, 1)
	start := time.Now()
	go func() {
		c, err := net.DialTimeout("tcp", h.Addr(), 5*time.Second)
		dialed <- result{c, err}
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case r := <-dialed:
		t.Fatalf("connect completed before Release: %v", r.err)
	default:
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	r := <-dialed
	if r.err != nil {
		t.Fatalf("connect hanging at Release: %v", r.err)
	}
	defer r.c.Close()
	t.Logf("the hanging connect completed %v after it began", time.Since(start))
	if got, err := roundTrip(r.c, []byte("held"), 5*time.Second); err != nil || string(got) != "held" {
		t.Fatalf("round trip through a released address: %q, %v", got, err)
	}
	c := dial(t, h.Addr())
	if got, err := roundTrip(c, []byte("next"), 5*time.Second); err != nil || string(got) != "next" {
		t.Fatalf("round trip on a new connection: %q, %v", got, err)
	}
	if n := h.Accepts(); n != 2 {
		t.Fatalf("Accepts() = %d, want 2", n)
	}
}

// TestHeldForeignNotForwarded: once a Held address is released, a client of another process
// that dials it is reset, not counted and not forwarded (before, it was forwarded to the
// upstream, which counted its bytes as this process's); a client of this process is.
func TestHeldForeignNotForwarded(t *testing.T) {
	e := startEcho(t)
	h, err := faultproxy.ListenHeld(e.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), foreignDialEnv+"="+h.Addr())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("foreign client: %v\n%s", err, out)
	}
	t.Logf("foreign client: %s", bytes.TrimSpace(out))
	if bytes.Contains(out, []byte("read 2")) { // "read 20 bytes": the echo came back
		t.Errorf("the foreign client got its bytes echoed: %s", out)
	}
	if n, got := h.Accepts(), e.received.Load(); n != 0 || got != 0 {
		t.Fatalf("after a foreign client: %d accepts, the upstream received %d bytes; want 0 and 0", n, got)
	}
	c := dial(t, h.Addr())
	if got, err := roundTrip(c, []byte("own"), 5*time.Second); err != nil || string(got) != "own" {
		t.Fatalf("own client: got %q, %v", got, err)
	}
	if n := h.Accepts(); n != 1 {
		t.Fatalf("Accepts() = %d after this process's client, want 1", n)
	}
}
