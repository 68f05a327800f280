package naming_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func eps(ports ...int) []endpoint.Endpoint {
	out := []endpoint.Endpoint{}
	for _, p := range ports {
		out = append(out, endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: p, Weight: -1})
	}
	return out
}

func TestListEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b naming.List
		want bool
	}{
		{"both empty", naming.List{}, naming.List{}, true},
		{"nil and empty", naming.List{Active: nil}, naming.List{Active: eps()}, true},
		{"same", naming.List{Active: eps(1, 2), Inactive: eps(3)}, naming.List{Active: eps(1, 2), Inactive: eps(3)}, true},
		{"order matters", naming.List{Active: eps(1, 2)}, naming.List{Active: eps(2, 1)}, false},
		{"inactive differs", naming.List{Active: eps(1)}, naming.List{Active: eps(1), Inactive: eps(2)}, false},
		{"active moved to inactive", naming.List{Active: eps(1, 2)}, naming.List{Active: eps(1), Inactive: eps(2)}, false},
	}
	for _, tt := range tests {
		if got := tt.a.Equal(tt.b); got != tt.want {
			t.Errorf("%s: Equal = %v, want %v", tt.name, got, tt.want)
		}
		if got := tt.b.Equal(tt.a); got != tt.want {
			t.Errorf("%s: Equal (reversed) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestErrorMessageAndMatching(t *testing.T) {
	cause := errors.New("connection refused")
	tests := []struct {
		name string
		err  *naming.Error
		want string
	}{
		{"no answer", &naming.Error{Query: naming.Query{Object: "A.B.C"}}, "naming: no endpoint list for A.B.C yet (no answer from its source)"},
		{"failure", &naming.Error{Query: naming.Query{Object: "A.B.C"}, Cause: cause}, "naming: no endpoint list for A.B.C yet: connection refused"},
		{"set", &naming.Error{Query: naming.Query{Object: "A.B.C", Set: "app.sz.1"}, Cause: cause}, "naming: no endpoint list for A.B.C in set app.sz.1 yet: connection refused"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
		if !errors.Is(tt.err, naming.ErrNaming) {
			t.Errorf("%s: does not match ErrNaming", tt.name)
		}
		if got := errors.Is(tt.err, cause); got != (tt.err.Cause != nil) {
			t.Errorf("%s: errors.Is(cause) = %v", tt.name, got)
		}
	}
}

// fakeSource is a Source (and, with reporting, a Reporter) driven by the test: it records its
// watches and lets the test push lists and failures to them.
type fakeSource struct {
	mu      sync.Mutex
	push    func(naming.List)
	fail    func(error)
	watches int
	stopped int
	started chan struct{}
}

func newFake() *fakeSource { return &fakeSource{started: make(chan struct{}, 8)} }

func (s *fakeSource) Watch(q naming.Query, push func(naming.List)) func() {
	return s.WatchReporting(q, push, nil)
}

func (s *fakeSource) WatchReporting(_ naming.Query, push func(naming.List), fail func(error)) func() {
	s.mu.Lock()
	s.push, s.fail = push, fail
	s.watches++
	s.mu.Unlock()
	s.started <- struct{}{}
	return func() {
		s.mu.Lock()
		s.push, s.fail = nil, nil
		s.stopped++
		s.mu.Unlock()
	}
}

func (s *fakeSource) send(l naming.List) {
	s.mu.Lock()
	p := s.push
	s.mu.Unlock()
	if p != nil {
		p(l)
	}
}

func (s *fakeSource) failWith(err error) {
	s.mu.Lock()
	f := s.fail
	s.mu.Unlock()
	if f != nil {
		f(err)
	}
}

// plainSource hides WatchReporting: a Source that is not a Reporter.
type plainSource struct{ s *fakeSource }

func (p plainSource) Watch(q naming.Query, push func(naming.List)) func() { return p.s.Watch(q, push) }

// TestManager runs a Manager over a fake source through a table of events, checking after each
// what was pushed and what Err says.
func TestManager(t *testing.T) {
	refused := errors.New("connection refused")
	type event struct {
		list    *naming.List // push this list
		fail    error        // or report this failure
		pushed  int          // lists handed on so far
		errIs   error        // Err must match this (nil: Err must be nil)
		errWith error        // and wrap this
	}
	l1, l2 := naming.List{Active: eps(1)}, naming.List{Active: eps(1, 2)}
	tests := []struct {
		name   string
		plain  bool // the source is not a Reporter
		events []event
	}{
		{
			name: "lists handed on, equal ones dropped",
			events: []event{
				{pushed: 0, errIs: naming.ErrNaming},
				{list: &l1, pushed: 1},
				{list: &l1, pushed: 1},
				{list: &l2, pushed: 2},
				{list: &l1, pushed: 3},
			},
		},
		{
			name: "a failure before any list is Err's cause; a list clears it",
			events: []event{
				{fail: refused, errIs: naming.ErrNaming, errWith: refused},
				{fail: refused, errIs: naming.ErrNaming, errWith: refused},
				{list: &l1, pushed: 1},
				{fail: refused, pushed: 1}, // the last list stays: no error
			},
		},
		{
			name: "the empty list is a list",
			events: []event{
				{list: &naming.List{}, pushed: 1},
				{list: &naming.List{}, pushed: 1},
			},
		},
		{
			name:  "a source that is not a Reporter: Err says no answer",
			plain: true,
			events: []event{
				{fail: refused, errIs: naming.ErrNaming}, // not delivered
				{list: &l1, pushed: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFake()
			var s naming.Source = src
			if tt.plain {
				s = plainSource{src}
			}
			var mu sync.Mutex
			var got []naming.List
			m := naming.NewManager(s, naming.Query{Object: "A"}, func(l naming.List) {
				mu.Lock()
				got = append(got, l)
				mu.Unlock()
			})
			m.Start()
			m.Start() // once
			select {
			case <-src.started:
			case <-time.After(10 * time.Second):
				t.Fatal("Start did not start the watch")
			}
			for i, ev := range tt.events {
				switch {
				case ev.list != nil:
					src.send(*ev.list)
				case ev.fail != nil:
					src.failWith(ev.fail)
				}
				mu.Lock()
				n := len(got)
				mu.Unlock()
				if n != ev.pushed {
					t.Fatalf("event %d: %d lists handed on, want %d", i, n, ev.pushed)
				}
				err := m.Err()
				switch {
				case ev.errIs == nil && err != nil:
					t.Fatalf("event %d: Err = %v, want nil", i, err)
				case ev.errIs != nil && !errors.Is(err, ev.errIs):
					t.Fatalf("event %d: Err = %v, want %v", i, err, ev.errIs)
				case ev.errWith != nil && !errors.Is(err, ev.errWith):
					t.Fatalf("event %d: Err = %v, want it to wrap %v", i, err, ev.errWith)
				case ev.errIs != nil && ev.errWith == nil && !strings.Contains(err.Error(), "no answer"):
					t.Fatalf("event %d: Err = %v, want 'no answer'", i, err)
				}
			}
			if last, ok := m.Last(); ok != (len(got) > 0) || (ok && !last.Equal(got[len(got)-1])) {
				t.Fatalf("Last = %v, %v; handed on %v", last, ok, got)
			}
			m.Close()
			src.send(naming.List{Active: eps(9)})
			mu.Lock()
			defer mu.Unlock()
			for _, l := range got {
				if len(l.Active) == 1 && l.Active[0].Port == 9 {
					t.Fatal("a list was handed on after Close")
				}
			}
			src.mu.Lock()
			defer src.mu.Unlock()
			if src.watches != 1 || src.stopped != 1 {
				t.Fatalf("%d watches started, %d stopped; want 1 and 1", src.watches, src.stopped)
			}
		})
	}
}

// TestManagerCloseBeforeStart: a Manager closed before Start never watches.
func TestManagerCloseBeforeStart(t *testing.T) {
	src := newFake()
	m := naming.NewManager(src, naming.Query{Object: "A"}, func(naming.List) { t.Error("push after Close") })
	m.Close()
	m.Start()
	if src.watches != 0 {
		t.Fatalf("%d watches after Close then Start, want 0", src.watches)
	}
}

// TestStatic: every watch gets the list at once.
func TestStatic(t *testing.T) {
	s := naming.Static{Active: eps(1, 2)}
	for range 2 {
		var got []naming.List
		stop := s.Watch(naming.Query{Object: "A"}, func(l naming.List) { got = append(got, l) })
		stop()
		if len(got) != 1 || !got[0].Equal(naming.List(s)) {
			t.Fatalf("Static watch got %v", got)
		}
	}
}
