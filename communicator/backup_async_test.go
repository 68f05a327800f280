package communicator_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// asyncOutcomes counts the callbacks of n async or future calls, each by its index: a call
// called back twice, or never, shows.
type asyncOutcomes struct {
	n     int
	calls []atomic.Int32
	errs  []atomic.Pointer[error]
	from  []atomic.Pointer[string]
	done  chan int
}

func newAsyncOutcomes(n int) *asyncOutcomes {
	return &asyncOutcomes{n: n, calls: make([]atomic.Int32, n), errs: make([]atomic.Pointer[error], n),
		from: make([]atomic.Pointer[string], n), done: make(chan int, 2*n)}
}

// end records call i's outcome.
func (o *asyncOutcomes) end(i int, from string, err error) {
	o.calls[i].Add(1)
	if err != nil {
		o.errs[i].Store(&err)
	} else {
		o.from[i].Store(&from)
	}
	o.done <- i
}

// async makes call i as an async call of sp, or as a future call when future is set.
func (o *asyncOutcomes) async(t *testing.T, ctx context.Context, sp *servantproxy.ServantProxy, i int, future bool) {
	t.Helper()
	name, seq := fmt.Sprint("c", i), uint64(i)
	rsp := new(hellopb.HelloReply)
	finish := func(err error) {
		if err != nil {
			o.end(i, "", err)
			return
		}
		from, err := checkReply(rsp, name, seq)
		o.end(i, from, err)
	}
	if future {
		f := sp.FutureInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, rsp)
		f.OnDone(func(_ proto.Message, err error) { finish(err) })
		return
	}
	if err := sp.AsyncInvoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, rsp, finish); err != nil {
		t.Fatalf("async call %d refused: %v", i, err)
	}
}

// wait waits for every call's callback (a liveness bound: it fails with the goroutines), then
// checks that none was called back twice.
func (o *asyncOutcomes) wait(t *testing.T) {
	t.Helper()
	tm := time.NewTimer(closetest.Limit)
	defer tm.Stop()
	for got := 0; got < o.n; got++ {
		select {
		case <-o.done:
		case <-tm.C:
			t.Fatalf("%d of %d callbacks after %v; goroutines:\n%s", got, o.n, closetest.Limit, allStacks())
		}
	}
	for i := range o.n {
		if k := o.calls[i].Load(); k != 1 {
			t.Fatalf("call %d called back %d times, want once", i, k)
		}
	}
}

// TestAsyncBackupRequest: async and future calls of an idempotent function get backup requests
// as sync calls do. One of two endpoints holds every call for 2s; the calls it was given are
// answered by their backups on the other one, each exactly once with its own reply, and the
// max-inflight slots all come back.
func TestAsyncBackupRequest(t *testing.T) {
	a, b := startTGreeter(t, "a"), startTGreeter(t, "b")
	b.hold.Store(int64(2 * time.Second))
	sv := conf.Servant{LoadBalance: "roundrobin", BackupRequest: raceSlack(10*time.Millisecond, 30*time.Millisecond),
		BackupBudget: 1, Idempotent: []string{"SayHello"}, MaxInflight: 1000}
	_, sp := tailProxy(t, sv, a, b)
	ctx := testCtx(t)
	const n = 40
	o := newAsyncOutcomes(2 * n)
	for i := range 2 * n {
		o.async(t, ctx, sp, i, i >= n)
	}
	o.wait(t)
	for i := range 2 * n {
		if e := o.errs[i].Load(); e != nil {
			t.Fatalf("call %d: %v", i, *e)
		}
		if from := *o.from[i].Load(); from != "a" {
			t.Errorf("call %d answered by %s, want a (b holds its calls for 2s, past the backups)", i, from)
		}
	}
	st := sp.BackupStats()
	t.Logf("backups: %+v", st)
	// About n calls went first to b (round robin; a backup's routing moves the rotation, so not
	// exactly n on a busy machine, where a's calls get backups too): each was answered by a, so
	// by its backup. The counts say so within that slack.
	if st.Won < n/2 || st.Won > st.Sent || st.Sent > 2*n {
		t.Errorf("backups sent %d, won %d: want about the %d calls round robin gave b won, and no more won than sent", st.Sent, st.Won, n)
	}
	if got := sp.Inflight(); got != 0 {
		t.Errorf("max-inflight counts %d calls after every callback, want 0", got)
	}
}

// TestAsyncBackupCancelAndClose: with both endpoints holding calls, a cancelled context ends a
// call and its backup with one callback (context.Canceled), and Close ends the rest with one
// callback each; the slots come back and Close returns.
func TestAsyncBackupCancelAndClose(t *testing.T) {
	a, b := startTGreeter(t, "a"), startTGreeter(t, "b")
	a.hold.Store(int64(3 * time.Second))
	b.hold.Store(int64(3 * time.Second))
	sv := conf.Servant{BackupRequest: 10 * time.Millisecond, BackupBudget: 1, Idempotent: []string{"SayHello"}, MaxInflight: 1000}
	comm, sp := tailProxy(t, sv, a, b)

	const n = 30
	ctx, cancel := context.WithCancel(context.Background())
	o := newAsyncOutcomes(n)
	for i := range n {
		o.async(t, ctx, sp, i, i%2 == 1)
	}
	deadline := time.Now().Add(closetest.Limit)
	for sp.BackupStats().Sent < n/2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	o.wait(t)
	for i := range n {
		if e := o.errs[i].Load(); e == nil || !errors.Is(*e, context.Canceled) {
			t.Fatalf("call %d after cancel: %v, want context.Canceled", i, e)
		}
	}
	if sent := sp.BackupStats().Sent; sent == 0 {
		t.Fatal("no backup was sent before the cancel: the test did not reach that path")
	}
	if got := sp.Inflight(); got != 0 {
		t.Errorf("max-inflight counts %d calls after every callback, want 0", got)
	}

	o2 := newAsyncOutcomes(n)
	sent := sp.BackupStats().Sent
	for i := range n {
		o2.async(t, context.Background(), sp, i, i%2 == 1)
	}
	for sp.BackupStats().Sent < sent+n/2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := closeComm(t, comm); err != nil {
		t.Fatalf("Close: %v", err)
	}
	o2.wait(t)
	for i := range n {
		if e := o2.errs[i].Load(); e == nil || !errors.Is(*e, communicator.ErrClosed) {
			t.Errorf("call %d at Close: %v, want ErrClosed", i, e)
		}
	}
}
