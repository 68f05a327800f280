package communicator_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/naming"
)

// Stress tests of netthread's direct path (a caller on a quiet thread routes and writes its own
// call): the callers are few (one to three goroutines), so that the thread is often quiet and
// the path is taken, which each test checks with the thread's Direct count. The rest of the
// suite's stress tests call from many goroutines, which keeps a thread busy and off this path.

// directRunFor is how long a direct-path stress test runs: short by default, and as long as
// TARSCOMM_SOAK says when it is set (the soak's switch: TARSCOMM_SOAK=60s go test -race -run
// TestDirectPath ./communicator runs each for a minute).
func directRunFor(t *testing.T, short time.Duration) time.Duration {
	t.Helper()
	env := os.Getenv("TARSCOMM_SOAK")
	if env == "" {
		return short
	}
	d, err := time.ParseDuration(env)
	if err != nil || d <= 0 {
		t.Fatalf("TARSCOMM_SOAK=%q: want a positive duration such as 60s", env)
	}
	t.Logf("soak: running for %v (TARSCOMM_SOAK)", d)
	return d
}

// directCalls returns how many calls of c went the direct path so far.
func directCalls(c *communicator.Communicator) uint64 {
	var n uint64
	for _, th := range c.Stats().Threads {
		n += th.Direct
	}
	return n
}

// stampedBody returns a request body of n bytes (at least 5) that names its caller and its
// sequence number, the rest being a stretch of stampBytes whose start depends on both, so that a
// body cut short, shifted or spliced with another frame's bytes does not pass checkStamped.
func stampedBody(n int, caller byte, seq uint32) []byte {
	b := make([]byte, n)
	b[0] = caller
	binary.BigEndian.PutUint32(b[1:5], seq)
	off := stampOffset(caller, seq)
	copy(b[5:], stampBytes[off:off+n-5])
	return b
}

// stampBytes is the pattern stamped bodies are cut from: long enough for the largest body of
// the tests, at any offset; it repeats every 65521 bytes (a prime: the offsets of two bodies
// never meet).
var stampBytes = func() []byte {
	const period = 65521
	b := make([]byte, 7<<20)
	for i := range period {
		b[i] = byte(i*31 + i>>8)
	}
	for n := period; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
	return b
}()

func stampOffset(caller byte, seq uint32) int { return int(seq*7+uint32(caller)*3) % 251 }

// checkStamped returns the caller and sequence number of a body made by stampedBody, or an error
// if its bytes are not what stampedBody made.
func checkStamped(b []byte) (caller byte, seq uint32, err error) {
	if len(b) < 5 {
		return 0, 0, fmt.Errorf("body of %d bytes, too short to be stamped", len(b))
	}
	caller, seq = b[0], binary.BigEndian.Uint32(b[1:5])
	off := stampOffset(caller, seq)
	if !bytes.Equal(b[5:], stampBytes[off:off+len(b)-5]) {
		return caller, seq, fmt.Errorf("body of caller %d, call %d (%d bytes) is not the one sent: %w", caller, seq, len(b), sameBytes(b[5:], stampBytes[off:off+len(b)-5]))
	}
	return caller, seq, nil
}

// orderedEcho is a raw TARS peer for the direct path's wire tests: it reads request frames
// (after gate is closed, so that until then the client's socket fills), checks that each is
// whole (checkStamped) and that each caller's calls arrive in the order the caller made them,
// with none missing, and answers two-way calls with their own body.
type orderedEcho struct {
	*rawServer
	gate   chan struct{}
	once   sync.Once
	frames atomic.Int64 // well-formed frames read
	bad    atomic.Int64 // frames that were not whole, or out of order
}

func startOrderedEcho(t *testing.T) *orderedEcho {
	t.Helper()
	endToEnd(t)
	e := &orderedEcho{gate: make(chan struct{})}
	// A small receive buffer: the client's socket is full after its own send buffer (4 MiB at
	// most on Linux) and this, not after the tens of megabytes a loopback receiver may take.
	ln := listenSmallRcvBuf(t)
	e.rawServer = serveRaw(t, ln, func(_ int64, c net.Conn) {
		defer func() { _ = c.Close() }()
		<-e.gate
		fr := codec.NewFrameReader(c, 32<<20)
		next := map[byte]uint32{}
		var req codec.RequestPacket
		for {
			frame, err := fr.Next()
			if err != nil {
				return
			}
			if err := codec.DecodeRequest(frame, &req); err != nil {
				e.fail(t, "undecodable request frame %d: %v", e.frames.Load(), err)
				return
			}
			caller, seq, err := checkStamped(req.Buffer)
			if err != nil {
				e.fail(t, "frame %d: %v", e.frames.Load(), err)
				return
			}
			if want := next[caller]; seq != want {
				e.fail(t, "caller %d: call %d arrived where call %d was due", caller, seq, want)
				return
			}
			next[caller] = seq + 1
			e.frames.Add(1)
			if req.PacketType != codec.PacketOneway {
				if _, err := c.Write(replyFrame(&req, req.RequestID, req.Buffer)); err != nil {
					return
				}
			}
		}
	})
	t.Cleanup(e.open)
	return e
}

// open lets the peer read.
func (e *orderedEcho) open() { e.once.Do(func() { close(e.gate) }) }

func (e *orderedEcho) fail(t *testing.T, format string, args ...any) {
	e.bad.Add(1)
	t.Errorf("echo server: "+format, args...)
}

// TestDirectPathMixedFramesInOrder: two callers each send small calls (which the direct path
// writes, the rest of a write the socket takes only in part going to the loop), frames above the
// direct path's limit (which the loop writes through gnet) and frames above 1 MiB (which the
// loop hands to its large-frame writer), sync, async and one-way, on one connection to a peer
// that reads nothing at first, so the socket fills (short writes, EAGAIN) and then drains. The
// peer finds every frame whole and every caller's calls in the order made, none missing; every
// two-way call gets its own body back.
func TestDirectPathMixedFramesInOrder(t *testing.T) {
	const (
		callers   = 2
		fillBytes = 6 << 20 // one-way bytes of direct sizes each caller sends before the peer reads: more than a loopback socket holds
		mixed     = 12      // one-way calls of every size each caller sends then, the peer still not reading
		calls     = 60      // calls of each caller once the peer reads, of every kind and size
	)
	// The sizes of the calls, in turn: small ones and one at the direct path's limit, which
	// the direct path writes; one the loop batches through gnet; one for the large-frame writer.
	small := []int{40, 300, 2 << 10, 48 << 10, 120, 60 << 10, 64}
	sizes := []int{40, 300, 2 << 10, 48 << 10, 120, 100 << 10, 64, 1200 << 10}
	e := startOrderedEcho(t)
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToAddrs(t, comm, e.endpoint()+" -t 600000")
	ctx := testCtx(t)

	var sent [callers]atomic.Int64 // calls made by each caller (all of which must reach the peer)
	var wg sync.WaitGroup
	fill := make(chan struct{}, callers)
	for caller := range callers {
		wg.Go(func() {
			var seq uint32
			filled := false
			defer func() {
				if !filled {
					fill <- struct{}{}
				}
			}()
			next := func(sizes []int) []byte {
				b := stampedBody(sizes[int(seq+uint32(caller))%len(sizes)], byte(caller), seq)
				seq++
				sent[caller].Add(1)
				return b
			}
			// Phase 1: one-way calls only, while the peer reads nothing. Each completes once
			// its bytes are handed on, so the thread is quiet between them: small ones, which
			// go direct until the socket is full, then a few of every size.
			for n, i := 0, 0; n < fillBytes || i < mixed; {
				var b []byte
				if n < fillBytes {
					b = next(small)
					n += len(b)
				} else {
					b = next(sizes)
					i++
				}
				if err := sp.InvokeOnewayRaw(ctx, "echo", b); err != nil {
					t.Errorf("caller %d: one-way call %d: %v", caller, seq-1, err)
					return
				}
			}
			filled = true
			fill <- struct{}{}
			// Phase 2: every kind of call, while the peer drains the socket and answers.
			rng := rand.New(rand.NewPCG(uint64(caller), 7))
			var async []<-chan error
			for range calls {
				b := next(sizes)
				id := seq - 1
				switch k := rng.IntN(10); {
				case k < 4:
					got, err := sp.InvokeRaw(ctx, "echo", b)
					if err == nil && !bytes.Equal(got, b) {
						err = sameBytes(got, b)
					}
					if err != nil {
						t.Errorf("caller %d: sync call %d: %v", caller, id, err)
						return
					}
				case k < 7:
					done := make(chan error, 1)
					var runs atomic.Int32
					err := sp.AsyncInvokeRaw(ctx, "echo", b, func(got []byte, err error) {
						if runs.Add(1) > 1 {
							t.Errorf("caller %d: async call %d called back twice", caller, id)
							return
						}
						if err == nil {
							err = sameBytes(got, b)
						}
						done <- err
					})
					if err != nil {
						t.Errorf("caller %d: async call %d refused: %v", caller, id, err)
						return
					}
					if k == 4 {
						// Waited for at once: the thread is quiet again for the next call.
						if err := waitErr(done, live, "async call"); err != nil {
							t.Errorf("caller %d: async call %d: %v", caller, id, err)
							return
						}
						continue
					}
					async = append(async, done)
				default:
					if err := sp.InvokeOnewayRaw(ctx, "echo", b); err != nil {
						t.Errorf("caller %d: one-way call %d: %v", caller, id, err)
						return
					}
				}
			}
			for i, done := range async {
				if err := waitErr(done, live, "async call"); err != nil {
					t.Errorf("caller %d: async call (the %dth not waited for at once): %v", caller, i, err)
				}
			}
		})
	}
	// The peer starts reading once both callers have sent their fill (or given up), or after a
	// few seconds: a one-way call waits for the peer to read when it is queued behind a large
	// frame whose writer cannot finish, which happens in phase 1 if the socket never filled (a
	// system whose send buffers take more than the fill).
	go func() {
		defer e.open()
		tm := time.NewTimer(3 * time.Second)
		defer tm.Stop()
		for range callers {
			select {
			case <-fill:
			case <-tm.C:
				return
			}
		}
	}()
	waitBulk(t, &wg, "callers", bulkLimit)
	var total int64
	for i := range callers {
		total += sent[i].Load()
	}
	waitFor(t, "the peer reading every frame", func() bool { return e.frames.Load()+e.bad.Load() >= total || t.Failed() })
	if got := e.frames.Load(); got != total {
		t.Fatalf("the peer read %d well-formed frames in order, want the %d calls made", got, total)
	}
	d := directCalls(comm)
	if d == 0 {
		t.Fatalf("none of %d calls went the direct path: the test did not exercise it", total)
	}
	t.Logf("%d calls, %d of them direct", total, d)
}

// waitDone waits for wg, failing t with every goroutine's stack if it takes longer than
// closetest.Limit (a hang, not a slow machine).
func waitDone(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	_ = closetest.Within(t, what, func() error { wg.Wait(); return nil })
}

// bulkLimit bounds a test's work that moves tens of megabytes: under -race on a loaded machine
// a megabyte's page faults and copies take tens of milliseconds, so the callers of
// TestDirectPathMixedFramesInOrder (about 36 MiB to the peer and 14 back), 5 s beside two CPU
// hogs, took past closetest.Limit's 20 s in a make test beside two hogs and a CI run.
const bulkLimit = 2 * time.Minute

// waitBulk waits for wg, failing t with every goroutine's stack if it takes longer than limit.
func waitBulk(t *testing.T, wg *sync.WaitGroup, what string, limit time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tm := time.NewTimer(limit)
	defer tm.Stop()
	select {
	case <-done:
	case <-tm.C:
		t.Fatalf("%s did not finish within %v; goroutines:\n%s", what, limit, closetest.Stacks())
	}
}

// directLedger counts the outcomes of a direct-path stress test's calls by kind and class
// (classify); a class outside allowed is a failure.
type directLedger struct {
	mu       sync.Mutex
	outcomes map[string]int
	bad      []string
}

func newDirectLedger() *directLedger { return &directLedger{outcomes: map[string]int{}} }

// record notes that a call of kind ended with err; allowed are the classes it may end with.
func (l *directLedger) record(kind callKind, err error, allowed ...string) {
	c := classify(err)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.outcomes[string(kind)+" "+c]++
	if c != "" && (c == "ok" || slices.Contains(allowed, c) || (strings.HasPrefix(c, "server-") && slices.Contains(allowed, "server"))) {
		return
	}
	if len(l.bad) < 10 {
		l.bad = append(l.bad, fmt.Sprintf("%s call: %v", kind, err))
	}
}

// check fails t if a call ended in a way it may not have.
func (l *directLedger) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("outcomes: %v", l.outcomes)
	if len(l.bad) > 0 {
		t.Errorf("calls ended in a way they may not:\n%s", strings.Join(l.bad, "\n"))
	}
}

// TestDirectPathCancelAndTimeoutRace: two callers make sync, async and one-way calls with
// timeouts of 50 µs to 3 ms, and contexts cancelled at once (racing the call's own direct
// write), a little later, or never, against a server that answers at once (so the thread is
// often quiet and calls go direct). Every call ends once, with its own reply, a timeout or its
// context's error (one call in ten, with neither, with its reply); no connection is lost (a
// frame cut or spliced on the wire would make the server close it); the calls after the storm
// all succeed.
func TestDirectPathCancelAndTimeoutRace(t *testing.T) {
	runFor := directRunFor(t, 800*time.Millisecond)
	g := startFGreeter(t, "a")
	comm := newComm(t, faultConf(nil))
	sp := proxyTo(t, comm, g.greeter)
	l := newDirectLedger()
	var seq atomic.Uint64
	var wg sync.WaitGroup
	var asyncMu sync.Mutex
	var async []<-chan error
	stop := time.Now().Add(runFor)
	for caller := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(caller), 11))
			for time.Now().Before(stop) {
				n := seq.Add(1)
				ctx, cancel := context.WithCancel(context.Background())
				timeout := time.Duration(50+rng.IntN(3000)) * time.Microsecond
				sure := rng.IntN(10) == 0 // a call that must succeed: no cancel, a long timeout
				switch r := rng.IntN(3); {
				case sure:
					timeout = 3 * live
				case r == 0:
					go cancel() // races the call's own route and write
				case r == 1:
					time.AfterFunc(time.Duration(rng.IntN(2000))*time.Microsecond, cancel)
				}
				opts := withTimeout(timeout)
				allowed := []string{"timeout", "canceled", "deadline", "server"}
				if sure {
					allowed = nil
				}
				switch k := rng.IntN(20); {
				case k < 10:
					_, err := sayHello(ctx, sp, "sync", n, opts...)
					l.record(syncCall, err, allowed...)
				case k < 17:
					done, err := asyncHello(t, ctx, sp, "async", n, opts...)
					if err != nil {
						l.record(asyncCall, err, allowed...)
						break
					}
					if sure || rng.IntN(2) == 0 {
						err := waitErr(done, live, "async call")
						l.record(asyncCall, err, allowed...)
						break
					}
					// Ended later, while other calls go.
					out := make(chan error, 1)
					asyncMu.Lock()
					async = append(async, out)
					asyncMu.Unlock()
					go func() {
						err := waitErr(done, live, "async call")
						l.record(asyncCall, err, allowed...)
						out <- err
					}()
				default:
					l.record(onewayCall, onewayHello(ctx, sp, "oneway", n, opts...), allowed...)
				}
				cancel()
			}
		})
	}
	waitDone(t, &wg, "callers")
	for _, out := range async {
		<-out // each ends within live (waitErr)
	}
	for i := range 20 {
		if _, err := sayHello(testCtx(t), sp, "after", uint64(i), withTimeout(3*live)...); err != nil {
			t.Fatalf("call %d after the storm: %v", i, err)
		}
	}
	l.check(t)
	checkNoConnLoss(t, comm)
	if d := directCalls(comm); d == 0 {
		t.Errorf("none of %d calls went the direct path: the test did not exercise it", seq.Load())
	} else {
		t.Logf("%d calls, %d of them direct", seq.Load(), d)
	}
}

// checkNoConnLoss fails t if one of c's connections was lost or failed to connect.
func checkNoConnLoss(t *testing.T, c *communicator.Communicator) {
	t.Helper()
	for _, e := range c.Stats().Endpoints {
		if e.ConnLosses != 0 || e.ConnFails != 0 {
			t.Errorf("endpoint %s: %d connections lost, %d connects failed; want none (nothing closed them)", e.Endpoint, e.ConnLosses, e.ConnFails)
		}
	}
}

// TestDirectPathConnectionChurn: two callers make sync, async and one-way calls, often alone on
// their net thread (so they go direct), over two connections per endpoint, while those keep
// ending under them: the servers' side resets or closes them (through fault proxies), the
// client closes them when idle (an endpoint -t of 25 ms), and the servant's endpoint list drops
// and restores each of its two endpoints; then the Communicator closes while they call. Every call ends (sync and one-way
// calls return; every accepted async call is called back exactly once, before Close returns),
// with its own reply or a timeout, connection or closed error; calls begun after Close returned
// fail with ErrClosed.
func TestDirectPathConnectionChurn(t *testing.T) {
	runFor := directRunFor(t, time.Second)
	// tgreeters: their handler does not look up each new connection's owner in /proc (as an
	// fgreeter's does), which costs tens of milliseconds on a busy machine, paid here by every
	// one of the many connections.
	eps := []*tgreeter{startTGreeter(t, "a"), startTGreeter(t, "b")}
	var lists [3]naming.List // a and b, a only, b only
	for i, e := range eps {
		ep, err := endpoint.ParseEndpoint(e.endpoint() + " -t 25")
		if err != nil {
			t.Fatal(err)
		}
		lists[0].Active = append(lists[0].Active, ep)
		lists[1+i].Active = []endpoint.Endpoint{ep}
	}
	src := &listSource{last: lists[0]}
	// Two connections per endpoint: a call that fails unsent on one moves to the other.
	comm := newCommWith(t, faultConf(func(c *conf.Config) {
		c.Servants = map[string]conf.Servant{servant: {Connections: 2}}
	}), communicator.WithNaming(src))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}

	l := newDirectLedger()
	var (
		seq      atomic.Uint64
		wg       sync.WaitGroup
		asyncMu  sync.Mutex
		async    []<-chan error
		closing  = make(chan struct{}) // the Communicator is closing
		closed   atomic.Bool           // its Close returned
		afterBad atomic.Int64          // calls begun after Close returned that did not fail with ErrClosed
	)
	allowed := []string{"timeout", "connection", "closed"}
	for caller := range 2 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(caller), 13))
			for after := 0; after < 20; {
				begunClosed := closed.Load()
				if begunClosed {
					after++
				}
				n := seq.Add(1)
				ctx := context.Background()
				opts := withTimeout(300 * time.Millisecond)
				var err error
				kind := syncCall
				switch k := rng.IntN(10); {
				case k < 5:
					_, err = sayHello(ctx, sp, "sync", n, opts...)
				case k < 8:
					kind = asyncCall
					var done <-chan error
					done, err = asyncHello(t, ctx, sp, "async", n, opts...)
					if err == nil {
						asyncMu.Lock()
						async = append(async, done)
						asyncMu.Unlock()
					}
				default:
					kind = onewayCall
					err = onewayHello(ctx, sp, "oneway", n, opts...)
				}
				if kind != asyncCall || err != nil {
					l.record(kind, err, allowed...)
				}
				if begunClosed && !errors.Is(err, communicator.ErrClosed) {
					afterBad.Add(1)
					t.Errorf("%s call begun after Close returned: %v, want ErrClosed", kind, err)
				}
				// Mostly back to back; now and then idle past the endpoints' -t.
				select {
				case <-closing:
				default:
					if rng.IntN(40) == 0 {
						time.Sleep(40 * time.Millisecond)
					} else {
						time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
					}
				}
			}
		})
	}

	// The churn: resets and orderly closes from the servers' side, list changes, stats reads
	// (which run on the loop, as list changes do).
	rng := rand.New(rand.NewPCG(1, 2))
	var cuts, hangups, changes int
	for stop := time.Now().Add(runFor); time.Now().Before(stop); {
		switch r := rng.IntN(10); {
		case r < 2:
			cuts += eps[rng.IntN(2)].p.Cut()
		case r < 4:
			hangups += eps[rng.IntN(2)].p.Hangup()
		case r < 6:
			src.Set(lists[rng.IntN(3)])
			changes++
		default:
			_ = comm.Stats()
		}
		time.Sleep(time.Duration(2+rng.IntN(12)) * time.Millisecond)
	}
	direct := directCalls(comm)
	close(closing)
	if err := closeComm(t, comm); err != nil {
		t.Errorf("Close: %v", err)
	}
	closed.Store(true)
	waitDone(t, &wg, "callers")

	// Every accepted async call was called back before Close returned.
	asyncMu.Lock()
	for i, done := range async {
		select {
		case err := <-done:
			l.record(asyncCall, err, allowed...)
		default:
			t.Errorf("async call %d of %d: no callback by the time Close returned", i, len(async))
		}
	}
	asyncMu.Unlock()
	l.check(t)
	t.Logf("%d calls (%d async), %d of them direct; %d connections reset, %d closed by the server, %d list changes", seq.Load(), len(async), direct, cuts, hangups, changes)
	if direct == 0 {
		t.Errorf("no call went the direct path: the test did not exercise it")
	}
}

// TestDirectPathAsyncBackupAlone: a lone caller's async calls of an idempotent function, with
// backup requests and a single endpoint that answers after the backup delay. The primary call
// goes direct; its backup, sent from a timer while the primary waits, has nowhere to go and fails
// at once, in the Notify of the pair, which takes the pair's lock that the timer holds while it
// submits the backup. That is safe only because a call is never routed on its submitter's
// goroutine while another call waits on its thread (the backup's primary does): were the
// backup routed on the timer's goroutine, its failure would wait for that lock forever, and
// the net thread with it. Every call is called back once, with the primary's reply.
func TestDirectPathAsyncBackupAlone(t *testing.T) {
	g := startTGreeter(t, "a")
	g.hold.Store(int64(raceSlack(20*time.Millisecond, 40*time.Millisecond)))
	sv := conf.Servant{BackupRequest: 5 * time.Millisecond, BackupBudget: 1, Idempotent: []string{"SayHello"}}
	comm, sp := tailProxy(t, sv, g)
	ctx := testCtx(t)
	const n = 15
	o := newAsyncOutcomes(n)
	for i := range n {
		o.async(t, ctx, sp, i, i%2 == 1)
		select {
		case <-o.done:
		case <-time.After(closetest.Limit):
			t.Fatalf("async call %d: no callback within %v; goroutines:\n%s", i, closetest.Limit, allStacks())
		}
	}
	for i := range n {
		if k := o.calls[i].Load(); k != 1 {
			t.Fatalf("call %d called back %d times, want once", i, k)
		}
		if e := o.errs[i].Load(); e != nil {
			t.Fatalf("call %d: %v", i, *e)
		}
	}
	st := sp.BackupStats()
	t.Logf("backups: %+v; %d calls direct", st, directCalls(comm))
	if st.Unsent == 0 { // the backups, alone on the servant, end unsent: Sent stays 0
		t.Errorf("no backup was made: the test did not reach that path")
	}
}

// TestDirectPathAfterLargeFrameFallback: when a frame of 1 MiB or more cannot get its writer
// goroutine (the socket's descriptor cannot be duplicated: the process is out of descriptors),
// the loop hands the rest of the frame to gnet instead. A small call after it must not be written
// by its caller until gnet has written that rest, or its bytes land inside the large frame. The
// peer, reading all along, finds every frame whole and in order. (Without the rule the caller's
// write lands inside the large frame only when the socket has room at that moment, before the
// loop fills it from gnet's buffer: a few rounds make that likely.)
func TestDirectPathAfterLargeFrameFallback(t *testing.T) {
	const (
		rounds = 5
		small  = 4
		body   = 2 << 10
		large  = 6 << 20 // more than the socket takes at once
	)
	e := startOrderedEcho(t)
	comm := newComm(t, faultConf(livenessTimeouts))
	sp := proxyToAddrs(t, comm, e.endpoint()+" -t 600000")
	ctx := testCtx(t)
	var seq uint32
	send := func(n int) {
		t.Helper()
		if err := sp.InvokeOnewayRaw(ctx, "echo", stampedBody(n, 0, seq)); err != nil {
			t.Fatalf("one-way call %d: %v", seq, err)
		}
		seq++
	}
	read := func() {
		t.Helper()
		total := int64(seq)
		waitFor(t, "the peer reading every frame", func() bool { return e.frames.Load()+e.bad.Load() >= total || t.Failed() })
		if got := e.frames.Load(); got != total {
			t.Fatalf("the peer read %d well-formed frames in order, want the %d calls made", got, total)
		}
	}
	send(body) // connects
	waitFor(t, "the peer accepting the connection", func() bool { return e.accepts.Load() == 1 })
	e.open()
	for range rounds {
		restore := outOfDescriptors(t)
		send(large)
		restore()
		// gnet writes the rest of the large frame as the peer makes room; the small calls go
		// meanwhile, each once the loop has let go of the thread (a call made at once, while
		// the loop that completed the large one-way call still holds it, goes through it).
		for range small {
			time.Sleep(2 * time.Millisecond)
			send(body)
		}
		read()
	}
	t.Logf("%d calls, %d of them direct", seq, directCalls(comm))
}

// outOfDescriptors makes the process unable to open a descriptor until the returned restore is
// called (t.Cleanup calls it too): RLIMIT_NOFILE is lowered to the lowest free descriptor, and
// every one below it is taken. Nothing else of the test may need a descriptor meanwhile.
func outOfDescriptors(t *testing.T) (restore func()) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	free, err := syscall.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	_ = syscall.Close(free)
	low := lim
	setRlimitCur(&low.Cur, free)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower RLIMIT_NOFILE: %v", err)
	}
	var taken []int
	restore = sync.OnceFunc(func() {
		for _, fd := range taken {
			_ = syscall.Close(fd)
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Errorf("restore RLIMIT_NOFILE: %v", err)
		}
	})
	t.Cleanup(restore)
	for {
		fd, err := syscall.Dup(0)
		if err != nil {
			return restore
		}
		taken = append(taken, fd)
	}
}

// setRlimitCur sets an Rlimit's Cur, whose type is the system's (uint64 on Linux and macOS,
// int64 on FreeBSD).
func setRlimitCur[T int64 | uint64](cur *T, n int) { *cur = T(n) }
