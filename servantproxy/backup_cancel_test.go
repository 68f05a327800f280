package servantproxy

import (
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestAsyncBackupCancelAfterBackupAnswered: an async call's context ends just as its backup's
// reply is being handed over (the backup completed on the loop; its end waits for the pair's
// lock) while the first call is still pending. The backup's reply is the call's outcome: cancel
// must not claim it. Before, cancel abandoned the first call, ignored that the backup could not
// be abandoned, and claimed the outcome: the caller was told Cancelled while Stats counted the
// backup's success, and the reply was dropped.
func TestAsyncBackupCancelAfterBackupAnswered(t *testing.T) {
	delivered := make(chan *call.Call, 2)
	p := &proxy{notify: func(x *call.Call) { delivered <- x }}
	c, c2 := call.Get(), call.Get()
	a := &asyncBackup{p: p, b: &backup{}, c: c, c2: c2, gen: c.Gen(), gen2: c2.Gen()}
	entered, release := make(chan struct{}), make(chan struct{})
	c.Notify = a.end
	c2.Notify = func(x *call.Call) { close(entered); <-release; a.end(x) }
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		c2.Complete(nil) // the backup's reply
	}()
	<-entered
	claimed := a.cancel()
	close(release)
	<-ended
	if claimed {
		t.Fatal("cancel claimed the outcome of a call whose backup had answered; want the reply delivered")
	}
	select {
	case x := <-delivered:
		if x != c2 || x.Err != nil {
			t.Fatalf("delivered %p (err %v), want the backup %p with its reply", x, x.Err, c2)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no outcome delivered within 5s")
	}
	if c.Complete(nil) {
		t.Fatal("the first call was not abandoned: its completion would deliver a second outcome")
	}
}

// TestAsyncBackupCancelAfterBackupFailed: the same moment, but the backup failed (a transport
// error) while the first call is still pending. Its failure was not counted (the first call is
// the pair's last half), and the first call, abandoned now, will be counted as cancelled: so
// cancel claims the outcome, the caller gets the context's error, and the backup's end recycles
// it without delivering. Before, the backup's failure was delivered while Stats counted a
// cancellation.
func TestAsyncBackupCancelAfterBackupFailed(t *testing.T) {
	delivered := make(chan *call.Call, 2)
	p := &proxy{notify: func(x *call.Call) { delivered <- x }}
	c, c2 := call.Get(), call.Get()
	a := &asyncBackup{p: p, b: &backup{}, c: c, c2: c2, gen: c.Gen(), gen2: c2.Gen()}
	entered, release := make(chan struct{}), make(chan struct{})
	c.Notify = a.end
	c2.Notify = func(x *call.Call) { close(entered); <-release; a.end(x) }
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		c2.Complete(call.ErrConnection) // the backup's connection failed
	}()
	<-entered
	claimed := a.cancel()
	close(release)
	<-ended
	if !claimed {
		t.Fatal("cancel left the outcome to a backup that failed; want the context's error, as Stats counts the pair (the first call, cancelled)")
	}
	select {
	case x := <-delivered:
		t.Fatalf("delivered %p (err %v) after cancel claimed the outcome", x, x.Err)
	default:
	}
	if c.Complete(nil) {
		t.Fatal("the first call was not abandoned")
	}
}
