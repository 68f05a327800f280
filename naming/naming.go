package naming

import (
	"errors"
	"slices"
	"sync"

	"github.com/tarscomm/tarscomm/endpoint"
)

// Query names what a Source resolves.
type Query struct {
	Object string // the servant, e.g. "App.Server.Obj" (without a "#tag")
	Set    string // "name.area.group" when set routing is on, "" otherwise
}

// List is one answer: the endpoints to balance over, and those a registry lists as registered
// but inactive (kept so that hash routing stays stable; see objectproxy).
type List struct {
	Active   []endpoint.Endpoint
	Inactive []endpoint.Endpoint
}

// Equal reports whether l and m hold the same endpoints in the same order.
func (l List) Equal(m List) bool {
	return slices.Equal(l.Active, m.Active) && slices.Equal(l.Inactive, m.Inactive)
}

// Source resolves objects to endpoint lists and follows their changes.
type Source interface {
	// Watch starts following q: push is called with the first list as soon as it is known and
	// with every list after it, never concurrently for one watch (it may be called before Watch
	// returns). An empty Active list means the object has no endpoint now: its calls fail with
	// ErrNoEndpoint. While nothing is known push is not called, and calls wait within their
	// deadlines. stop ends the watch; after it returns push is not called again. A List pushed is
	// the receiver's: the source does not change its slices afterwards (the Manager keeps the
	// last one to compare, and the servant's endpoint list keeps them, uncopied).
	Watch(q Query, push func(List)) (stop func())
}

// Reporter is implemented by a Source that can say why it has no list for a query: the
// registry (a failed query), the file source (an unreadable or unparsable file), DNS (a failed
// resolution) and etcd (an unreachable etcd). A Manager
// uses it when its source has it, so that a call that ends waiting for its first list says why.
type Reporter interface {
	// WatchReporting is Watch that also calls fail with each failure to resolve q. A failure
	// replaces nothing: the last list pushed, if any, stays. push and fail are never called
	// concurrently for one watch, and neither is called after stop returns.
	WatchReporting(q Query, push func(List), fail func(error)) (stop func())
}

// ErrNaming matches the error of a call that ended (its deadline passed) while its servant was
// still waiting for its first endpoint list: the registry has not answered, or failed (the
// error wraps its last failure, so errors.Is and errors.As see it), or the naming file could
// not be read. Such a call also matches the call's ErrTimeout.
var ErrNaming = errors.New("tarscomm: no endpoint list from naming")

// Error is why a Manager has no list yet: it matches ErrNaming and unwraps to the source's last
// failure (nil while the source has simply not answered).
type Error struct {
	Query Query
	Cause error
}

func (e *Error) Error() string {
	s := "naming: no endpoint list for " + e.Query.Object
	if e.Query.Set != "" {
		s += " in set " + e.Query.Set
	}
	if e.Cause == nil {
		return s + " yet (no answer from its source)"
	}
	return s + " yet: " + e.Cause.Error()
}

// Is makes an Error match ErrNaming.
func (e *Error) Is(target error) bool { return target == ErrNaming }

// Unwrap returns the source's failure.
func (e *Error) Unwrap() error { return e.Cause }

// Static is the source of a proxy string's endpoints: every Watch gets the same list, at once,
// and nothing after.
type Static List

// Watch implements Source.
func (s Static) Watch(_ Query, push func(List)) func() {
	push(List(s))
	return func() {}
}

// Manager owns one servant's endpoint list, TarsCpp's EndpointManager: it starts the source's
// watch on the first Start (the servant's first call), hands every list that differs from the
// last to push, and stops the watch on Close. Its methods are safe for concurrent use.
type Manager struct {
	src  Source
	q    Query
	push func(List)

	mu      sync.Mutex
	started bool
	closed  bool
	stop    func()
	last    List
	have    bool
	failure error // the source's last failure since its last list
	wg      sync.WaitGroup
}

// NewManager returns the Manager of q over src; it does nothing until Start.
func NewManager(src Source, q Query, push func(List)) *Manager {
	return &Manager{src: src, q: q, push: push}
}

// Query returns what the Manager resolves.
func (m *Manager) Query() Query { return m.q }

// Start starts the watch, once; later calls do nothing. It does not block: the watch starts on a
// goroutine of its own, so that Start may be called from a net thread.
func (m *Manager) Start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started || m.closed {
		return
	}
	m.started = true
	m.wg.Go(func() {
		var stop func()
		if r, ok := m.src.(Reporter); ok {
			stop = r.WatchReporting(m.q, m.deliver, m.failed)
		} else {
			stop = m.src.Watch(m.q, m.deliver)
		}
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			stop()
			return
		}
		m.stop = stop
		m.mu.Unlock()
	})
}

// deliver passes l on unless it equals the last list.
func (m *Manager) deliver(l List) {
	m.mu.Lock()
	if m.closed || (m.have && l.Equal(m.last)) {
		m.mu.Unlock()
		return
	}
	m.last, m.have, m.failure = l, true, nil
	m.mu.Unlock()
	m.push(l)
}

// failed records the source's failure for Err.
func (m *Manager) failed(err error) {
	m.mu.Lock()
	m.failure = err
	m.mu.Unlock()
}

// Err returns why no list has been handed to push yet: nil once one was, otherwise an *Error
// (matching ErrNaming) wrapping the source's last failure, if it reported one.
func (m *Manager) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.have {
		return nil
	}
	return &Error{Query: m.q, Cause: m.failure}
}

// Last returns the last list handed to push, and whether there was one.
func (m *Manager) Last() (List, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last, m.have
}

// Close stops the watch and waits for it: push is not called after Close returns.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	stop := m.stop
	m.stop = nil
	m.mu.Unlock()
	m.wg.Wait()
	if stop != nil {
		stop()
	}
}
