package communicator_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/server"
)

// slowStopSource is a naming.Source (given with WithNaming) whose watches answer at once
// and whose stop takes as long as the test wants (an etcd watch tearing down, say).
type slowStopSource struct {
	eps     []endpoint.Endpoint
	inStop  chan struct{} // closed when a stop has begun
	release chan struct{} // a stop returns once this is closed
	once    sync.Once
	stopped atomic.Int32 // stops that returned
	live    atomic.Int32 // watches started and not stopped
}

func (s *slowStopSource) Watch(_ naming.Query, push func(naming.List)) func() {
	s.live.Add(1)
	push(naming.List{Active: s.eps})
	return func() {
		s.once.Do(func() { close(s.inStop) })
		<-s.release
		s.live.Add(-1)
		s.stopped.Add(1)
	}
}

// TestConcurrentCloseWaitsForWatches: "Calling it again, or concurrently, returns when the
// Communicator is closed", and Close stops the watches of WithNaming's source: a second Close
// made while the first is stopping a watch returns only once the watch has stopped. It returned
// at once: the first Close took the managers and the second found none.
func TestConcurrentCloseWaitsForWatches(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	ep, err := endpoint.ParseEndpoint(g.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	src := &slowStopSource{eps: []endpoint.Endpoint{ep}, inStop: make(chan struct{}), release: make(chan struct{})}
	cfg := conf.Default()
	livenessTimeouts(&cfg)
	c, err := communicator.New(cfg, communicator.WithNaming(src))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := c.Proxy(servant) // a bare object: resolved by src
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sayHello(testCtx(t), sp, "x", 1); err != nil {
		t.Fatalf("call through the naming source: %v", err)
	}
	if src.live.Load() != 1 {
		t.Fatalf("%d watches live, want 1", src.live.Load())
	}

	first := make(chan struct{})
	go func() { _ = c.Close(); close(first) }()
	select {
	case <-src.inStop:
	case <-time.After(live):
		close(src.release)
		t.Fatal("the first Close did not stop the watch")
	}
	second := make(chan struct{})
	go func() { _ = c.Close(); close(second) }()

	secondReturned := false
	select {
	case <-second:
		secondReturned = true
	case <-first:
		t.Error("the first Close returned while its watch's stop was blocked")
	case <-time.After(2 * time.Second): // the right outcome: the second Close waits for the first
	}
	liveAtReturn := src.live.Load()
	close(src.release)
	waitDone(t, func() *sync.WaitGroup {
		var wg sync.WaitGroup
		wg.Go(func() { <-first; <-second })
		return &wg
	}(), "both Closes")
	if secondReturned {
		t.Errorf("a concurrent Close returned while the first was still stopping the naming watch (%d watch still live): "+
			"it must return only when the Communicator is closed", liveAtReturn)
	}
}

// TestMaxInflightPerServant: max-inflight "caps this servant's calls in flight from this
// Communicator": two proxy strings of the servant ("Obj@ep" and "Obj#2@ep", as TarsCpp users
// write to get separate connections) share it, so the second call fails with ErrOverload. Each
// had a limit of its own, and the servant got twice its cap.
func TestMaxInflightPerServant(t *testing.T) {
	seen := make(chan *server.Current, 4)
	g := startGreeter(t, "a", serverOpt{block: true, seen: seen})
	c := newComm(t, func(cfg *conf.Config) {
		livenessTimeouts(cfg)
		cfg.Servants = map[string]conf.Servant{servant: {MaxInflight: 1}}
	})
	sp1, err := c.Proxy(servant + "@" + g.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	sp2, err := c.Proxy(servant + "#2@" + g.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer waitDone(t, &wg, "the held calls")
	defer func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	}()
	ctx := testCtx(t)
	wg.Go(func() { _, _ = sayHello(ctx, sp1, "held", 1) })
	recv(t, seen, "the first call at the server")

	errc := make(chan error, 1)
	wg.Go(func() {
		_, err := sayHello(ctx, sp2, "second", 2)
		errc <- err
	})
	select {
	case err := <-errc:
		if !errors.Is(err, communicator.ErrOverload) {
			t.Fatalf("second call of the servant beyond max-inflight = 1: %v, want ErrOverload", err)
		}
	case cur := <-seen:
		t.Fatalf("servant %s has max-inflight = 1 and one call in flight, yet a second call (%s, through %q) "+
			"was sent to the server: the cap is per proxy string, not per servant (sp1 in flight %d, sp2 in flight %d)",
			servant, cur.Func, sp2.Target().String(), sp1.Inflight(), sp2.Inflight())
	case <-time.After(live):
		t.Fatal("the second call neither failed nor reached the server")
	}
}
