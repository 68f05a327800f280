package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/naming/file"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

// backupSeen is one request a backupServer received.
type backupSeen struct {
	fn      string
	name    string
	seq     uint64
	id      int32
	timeout int32
	mt      int32
}

// backupServer is a project server for the backup routing tests: SayHello and Other answer
// "<name>@<id>" after the delay behave returns (or fail with its error); every request of this
// process is recorded.
type backupServer struct {
	id   string
	addr string
	quit chan struct{}

	mu   sync.Mutex
	seen []backupSeen
}

// behave decides, per request, how long the handler waits and whether it fails.
type behave func(fn, name string) (time.Duration, error)

func startBackupServer(t *testing.T, id string, b behave) *backupServer {
	t.Helper()
	endToEnd(t)
	rs := &backupServer{id: id, quit: make(chan struct{})}
	s := server.New(server.WithLogger(zap.NewNop()), server.WithNumEventLoop(1), server.WithWorkers(32))
	for _, fn := range []string{"SayHello", "Other"} {
		err := server.HandleProto(s, servant, fn, func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
			if !ownCaller(cur) {
				return nil, errors.New("not this test's caller")
			}
			rs.mu.Lock()
			rs.seen = append(rs.seen, backupSeen{fn: fn, name: req.GetName(), seq: req.GetSeq(), id: cur.RequestID, timeout: cur.Timeout, mt: cur.MessageType})
			rs.mu.Unlock()
			d, err := b(fn, req.GetName())
			if d > 0 {
				select {
				case <-time.After(d):
				case <-rs.quit:
				}
			}
			if err != nil {
				return nil, err
			}
			return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs.addr = a.String()
	t.Cleanup(func() {
		close(rs.quit)
		if err := stopServer(t, "server "+id, s); err != nil {
			t.Logf("stop server %s: %v", id, err)
		}
	})
	return rs
}

func (rs *backupServer) endpoint() string { return tcpEndpoint(rs.addr) }

// requests returns the requests of fn received so far.
func (rs *backupServer) requests(fn string) []backupSeen {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []backupSeen
	for _, s := range rs.seen {
		if s.fn == fn {
			out = append(out, s)
		}
	}
	return out
}

// backupRoutingComm starts a Communicator with one net thread whose test servant sends backups of SayHello
// after delay, with the budget never in the way, and sv edited by edit.
func backupRoutingComm(t *testing.T, delay time.Duration, edit func(c *conf.Config, sv *conf.Servant)) *communicator.Communicator {
	t.Helper()
	return newCommWith(t, func(c *conf.Config) {
		c.NetThread = 1
		sv := conf.Servant{LoadBalance: "roundrobin", BackupRequest: delay, BackupBudget: 1, Idempotent: []string{"SayHello"}}
		if edit != nil {
			edit(c, &sv)
		}
		c.Servants = map[string]conf.Servant{servant: sv}
	}, communicator.WithLogger(zap.NewNop()))
}

func routedCall(ctx context.Context, sp *servantproxy.ServantProxy, fn, name string, seq uint64, opts ...servantproxy.CallOption) (string, error) {
	rsp := new(hellopb.HelloReply)
	if err := sp.Invoke(ctx, fn, &hellopb.HelloRequest{Name: name, Seq: seq}, rsp, opts...); err != nil {
		return "", err
	}
	return checkReply(rsp, name, seq)
}

// TestBackupHashedCallKeepsEndpoint: WithHash promises that "calls with the same code go
// to the same net thread and the same endpoint (while the endpoint list is unchanged)". A hashed
// call of an idempotent function whose endpoint is slower than the backup delay has its backup
// sent to another endpoint (objectproxy.Backup.Route -> pickOther, which ignores the hash), so
// the requests of one hash code reach two endpoints and the caller may get its answer from an
// endpoint that does not own the code (a shard, a cache). A hashed call has no backup now (it
// failed before: the code's requests reached all three endpoints).
func TestBackupHashedCallKeepsEndpoint(t *testing.T) {
	slow := func(fn, name string) (time.Duration, error) { return 200 * time.Millisecond, nil }
	srv := []*backupServer{startBackupServer(t, "a", slow), startBackupServer(t, "b", slow), startBackupServer(t, "c", slow)}
	comm := backupRoutingComm(t, 20*time.Millisecond, func(c *conf.Config, sv *conf.Servant) { sv.LoadBalance = "hash" })
	sp := proxyToAddrs(t, comm, srv[0].endpoint(), srv[1].endpoint(), srv[2].endpoint())

	const code = 7
	answered := map[string]int{}
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		from, err := routedCall(ctx, sp, "SayHello", "h", uint64(i), servantproxy.WithHash(code))
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		answered[from]++
	}
	bs := sp.BackupStats()
	var got []string
	for _, s := range srv {
		if n := len(s.requests("SayHello")); n > 0 {
			for _, r := range s.requests("SayHello") {
				if r.mt&codec.MessageHash == 0 {
					t.Errorf("server %s got a request of a hashed call without the hash flag", s.id)
				}
			}
			got = append(got, fmt.Sprintf("%s:%d", s.id, n))
		}
	}
	if len(got) != 1 {
		t.Errorf("3 calls WithHash(%d) (backups %+v): their requests reached endpoints %v and the callers were answered by %v; "+
			"want every request of the code on its one endpoint (WithHash: calls with the same code go to the same endpoint)",
			code, bs, got, answered)
	}
}

// TestBackupSkipsIsolatedEndpoint: with circuit-breaker on, an endpoint that answers with
// framework errors is isolated ("an endpoint is chosen only when both [the health rules and the
// breaker] allow it"). A backup request is still sent to it: pickOther falls back to
// pickUntried, whose second loop takes any active endpoint not tried, healthy or not
// (objectproxy/select.go). The isolated endpoint's fast error reply then wins the race (a server
// error is a reply), and the caller gets that error although the healthy endpoint its call went
// to answers it successfully. A backup goes to healthy endpoints only now (it failed before).
func TestBackupSkipsIsolatedEndpoint(t *testing.T) {
	a := startBackupServer(t, "a", func(fn, name string) (time.Duration, error) {
		if fn == "SayHello" {
			return 300 * time.Millisecond, nil
		}
		return 0, nil
	})
	b := startBackupServer(t, "b", func(fn, name string) (time.Duration, error) { return 0, errors.New("b is broken") })
	comm := backupRoutingComm(t, 20*time.Millisecond, func(c *conf.Config, sv *conf.Servant) { sv.CircuitBreaker = true })
	sp := proxyToAddrs(t, comm, a.endpoint(), b.endpoint())

	// Isolate b: calls of Other (no backups) until b has failed for 1.6s, so that its probes failed
	// and its isolation doubled to 800ms or more; then until one more of b's probes failed, so
	// that its isolation starts now.
	start := time.Now()
	seq := uint64(0)
	for {
		if time.Since(start) > 10*time.Second {
			t.Fatal("b never isolated")
		}
		seq++
		_, err := routedCall(context.Background(), sp, "Other", "o", seq)
		if err != nil && time.Since(start) > 1600*time.Millisecond {
			break // b's probe failed: it is isolated, for 800ms or more
		}
	}
	nb := len(b.requests("Other"))
	for i := range 20 { // b is isolated: every call goes to a
		seq++
		if from, err := routedCall(context.Background(), sp, "Other", "o", seq); err != nil || from != "a" {
			t.Fatalf("call %d after b's isolation: from %q, %v: b is not isolated (%d requests of Other reached b)", i, from, err, nb)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	from, err := routedCall(ctx, sp, "SayHello", "s", 1)
	bs := sp.BackupStats()
	if err != nil || from != "a" || len(b.requests("SayHello")) != 0 {
		t.Errorf("a call of an idempotent function, sent to healthy a while b is isolated by the breaker: from %q, err %v; "+
			"b received %d SayHello requests (backups %+v); want the answer of a and no request to b (isolated endpoints get no calls)",
			from, err, len(b.requests("SayHello")), bs)
	}
}

// TestBackupNotToPrimaryEndpointAfterRetry: Backup.Route sends the backup "to another
// endpoint than the one the first went to", remembering the endpoint the first call was routed
// to (Backup.first). A first call whose connect failed is retried (retries = 1) on the other
// endpoint, b, where it waits; its backup avoids only the endpoint of the first try, a, and goes
// to b as well: b runs the same request twice and the backup cannot shorten anything. The
// Backup follows the first call's retries now (it failed before).
func TestBackupNotToPrimaryEndpointAfterRetry(t *testing.T) {
	// a: a port nobody listens on (connection refused).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := l.Addr().String()
	_ = l.Close()
	b := startBackupServer(t, "b", func(fn, name string) (time.Duration, error) {
		if fn == "SayHello" {
			return 200 * time.Millisecond, nil
		}
		return 0, nil
	})
	comm := backupRoutingComm(t, 50*time.Millisecond, func(c *conf.Config, sv *conf.Servant) {
		sv.Retries = 1
		c.Health.MaxConnectFail = 1000 // a stays in rotation: only its reconnect backoff keeps calls away
	})
	sp := proxyToAddrs(t, comm, tcpEndpoint(deadAddr)+" -v 1 -w 100", b.endpoint()+" -v 1 -w 1")

	// Each round, once a's reconnect backoff (150ms at most) is over, a call of SayHello: its
	// first request goes to a, which weighs 100 against b's 1 (static weights, -v 1).
	var retried bool
	for i := range 6 {
		time.Sleep(250 * time.Millisecond)
		before := connFails(comm, deadAddr)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		from, err := routedCall(ctx, sp, "SayHello", "r", uint64(i))
		cancel()
		if err != nil || from != "b" {
			t.Fatalf("call %d: from %q, %v; want b's answer", i, from, err)
		}
		if connFails(comm, deadAddr) > before {
			retried = true
		}
	}
	if !retried {
		t.Fatal("no call was routed to the dead endpoint: the test did not exercise a retry")
	}
	perSeq := map[uint64]int{}
	for _, r := range b.requests("SayHello") {
		perSeq[r.seq]++
	}
	var twice []uint64
	for s, n := range perSeq {
		if n > 1 {
			twice = append(twice, s)
		}
	}
	if len(twice) > 0 {
		t.Errorf("calls %v (backups %+v) each reached b twice: their first request, retried to b after a refused the connect, "+
			"and their backup, also sent to b; want a backup never sent to the endpoint its first request waits on", twice, sp.BackupStats())
	}
}

// connFails returns the failed dials to addr (host:port) so far.
func connFails(comm *communicator.Communicator, addr string) uint64 {
	var n uint64
	for _, e := range comm.Stats().Endpoints {
		if e.Servant == servant && strings.HasSuffix(e.Endpoint, addr) {
			n += e.ConnFails
		}
	}
	return n
}

// TestBackupOfParkedCallOneEndpoint: a servant resolved by a naming source, with one
// endpoint. Its first call is made before the first list and waits for it (parked); the list
// routes it (ObjectProxy.Install -> o.Route), so its Backup never learns the endpoint it went to
// (Backup.first stays nil). Its backup, sent delay later, avoids nothing (pickOther(c, -1)) and
// goes to the one endpoint the first request waits on: the server runs the call twice. A call
// routed after the list (TestBackupNoOtherEndpointCountedOnce) has its backup fail at once with
// no other endpoint, unsent. A parked first call is routed through its Backup now, and a backup
// made while it waits fails unsent (it failed before).
func TestBackupOfParkedCallOneEndpoint(t *testing.T) {
	a := startBackupServer(t, "a", func(fn, name string) (time.Duration, error) { return 3 * time.Second, nil })
	path := filepath.Join(t.TempDir(), "naming.txt")
	const delay = 2 * time.Second
	src := file.New(path, nil) // the file does not exist yet: calls wait for it
	t.Cleanup(func() { _ = src.Close() })
	comm := newCommWith(t, func(c *conf.Config) {
		c.NetThread = 1
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: delay, BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	}, communicator.WithLogger(zap.NewNop()), communicator.WithNaming(src))
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		_, err := routedCall(ctx, sp, "SayHello", "p", 1, servantproxy.WithTimeout(8*time.Second))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the call waits for the first list
	if err := os.WriteFile(path, []byte(servant+"@"+a.endpoint()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first request reaches the server", func() bool { return len(a.requests("SayHello")) >= 1 })
	if time.Since(start) >= delay {
		t.Skip("inconclusive: the list came after the backup delay (a very slow machine)")
	}
	var err2 error
	select {
	case err2 = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end within 10s")
	}
	if err2 != nil {
		t.Fatalf("call: %v", err2)
	}
	if n := len(a.requests("SayHello")); n != 1 {
		t.Errorf("one call to a servant of one endpoint, made before its first list: the endpoint received %d requests (backups %+v); "+
			"want 1 (a backup has no other endpoint to go to)", n, sp.BackupStats())
	}
}

// TestBackupStatsSentCountsOnlySent: BackupStats.Sent is "backups sent". On a servant of
// one endpoint a backup has nowhere to go: Backup.Route fails it at once with ErrNoEndpoint,
// nothing reaches the wire. Yet await/fire count it in Sent (and the first call's reply then
// counts a Dropped), and it spends a token of the backup budget, as soon as Submit took it. The
// loop tells whether the backup was sent now (objectproxy.Backup.Sent); an unsent one gets its
// token back (it failed before). Dropped, too, counts only pairs whose backup was sent, so it never
// exceeds Sent (before, each of these calls counted a Dropped: Sent 0, Dropped 5); the unsent
// backups are counted in Unsent.
func TestBackupStatsSentCountsOnlySent(t *testing.T) {
	for _, kind := range []string{"sync", "async"} {
		t.Run(kind, func(t *testing.T) {
			a := startBackupServer(t, "a", func(fn, name string) (time.Duration, error) { return 60 * time.Millisecond, nil })
			comm := backupRoutingComm(t, 10*time.Millisecond, nil)
			sp := proxyToAddrs(t, comm, a.endpoint())
			const n = 5
			for i := range n {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				var err error
				if kind == "sync" {
					_, err = routedCall(ctx, sp, "SayHello", "s", uint64(i))
				} else {
					done := make(chan error, 1)
					if err = sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: "s", Seq: uint64(i)}, new(hellopb.HelloReply), func(err error) { done <- err }); err == nil {
						select {
						case err = <-done:
						case <-time.After(10 * time.Second):
							t.Fatal("no callback within 10s")
						}
					}
				}
				cancel()
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			got := len(a.requests("SayHello"))
			bs := sp.BackupStats()
			if bs.Sent != uint64(got-n) {
				t.Errorf("%d %s calls, the server received %d requests (%d backups); BackupStats %+v: want Sent %d",
					n, kind, got, got-n, bs, got-n)
			}
			if bs.Dropped > bs.Sent {
				t.Errorf("BackupStats %+v: Dropped exceeds Sent (an unsent backup dropped no outcome)", bs)
			}
			if bs.Unsent+bs.Sent != n {
				t.Errorf("BackupStats %+v: want Unsent + Sent = %d, a backup for each call (delay 10ms, replies after 60ms)", bs, n)
			}
		})
	}
}
