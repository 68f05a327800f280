package future

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Future is a value of type T, or an error, that arrives later. Make creates one and Complete
// completes it; the other methods are safe for concurrent use from any goroutine.
type Future[T any] struct {
	done atomic.Bool // set once val and err are final; read without the lock

	mu    sync.Mutex
	ch    chan struct{} // made by the first Get that waits; closed on completion
	cbs   []func(T, error)
	first func(T, error) // the first callback, kept out of cbs so that one costs no slice
	val   T
	err   error

	help Helper // immutable; nil: a waiter only waits
	// until is the Done channel of the context the work completing f ends with (MakeCall);
	// immutable, nil for other futures.
	until <-chan struct{}
}

// Make returns a Future that completes when Complete is called.
func Make[T any]() *Future[T] { return new(Future[T]) }

// A Helper is what a goroutine about to wait for a future does meanwhile, when the work that
// completes the future may need that goroutine: a tarscomm call's future is completed by an
// async worker, and a Get in a callback, on a worker, would otherwise wait for itself (with every
// worker waiting so, for good). Wait returns nil once done is closed, or ctx's error when ctx
// ends first.
type Helper interface {
	Wait(ctx context.Context, done <-chan struct{}) error
}

// MakeHelped is Make for a future whose Get, Join and WhenAll wait through h.
func MakeHelped[T any](h Helper) *Future[T] { return &Future[T]{help: h} }

// MakeCall is MakeHelped for the future of work that ends when ctx ends and then completes the
// future with its own error (a tarscomm call made with ctx: its *CallError, matching ErrTimeout
// or wrapping ctx's error). A Get whose ctx is ctx, or shares its Done channel
// (context.WithValue of it), waits for that completion rather than returning ctx's bare error,
// so that f.Get(ctx) on the call's own ctx classifies as the call does. The work must complete
// f in bounded time once ctx ends (a call does, by its own deadline at the latest).
func MakeCall[T any](h Helper, ctx context.Context) *Future[T] {
	f := &Future[T]{help: h}
	if ctx != nil {
		f.until = ctx.Done()
	}
	return f
}

// endsWith reports whether the work completing f ends when ctx does (MakeCall).
func (f *Future[T]) endsWith(ctx context.Context) bool {
	return f.until != nil && ctx.Done() == f.until
}

// Ready returns a Future completed with v and err.
func Ready[T any](v T, err error) *Future[T] {
	f := new(Future[T])
	f.val, f.err = v, err
	f.done.Store(true)
	return f
}

// Complete completes f with v and err and runs f's callbacks on the calling goroutine, in
// the order they were registered. Only the first Complete counts: it returns false, and
// changes nothing, if f was already completed. A callback that panics does not keep the others
// from running (a WhenAll or Join waiting on f is one of them): Complete runs them all, then
// panics with the first callback's panic value. Nor does one that ends the goroutine
// (runtime.Goexit): the others run, then the goroutine ends.
func (f *Future[T]) Complete(v T, err error) bool {
	f.mu.Lock()
	if f.done.Load() {
		f.mu.Unlock()
		return false
	}
	f.val, f.err = v, err
	f.done.Store(true)
	ch, first, cbs := f.ch, f.first, f.cbs
	f.first, f.cbs = nil, nil
	f.mu.Unlock()
	if ch != nil {
		close(ch)
	}
	var panicked any
	if first != nil {
		ran := false
		defer func() {
			if !ran { // first ended the goroutine (runtime.Goexit): the others still run
				runEach(cbs, v, err)
			}
		}()
		panicked = run(first, v, err)
		ran = true
	}
	if p := runEach(cbs, v, err); panicked == nil {
		panicked = p
	}
	if panicked != nil {
		panic(panicked)
	}
	return true
}

// runEach runs cbs in order and returns the first panic value, or nil. A callback that ends the
// goroutine (runtime.Goexit: t.FailNow in a test's callback), which no recover stops, does not
// keep the others from running either: they run from a deferred call, which a Goexit runs too
// (their panics are dropped: the goroutine is ending), and the goroutine then ends.
func runEach[T any](cbs []func(T, error), v T, err error) (panicked any) {
	i := 0
	defer func() {
		if i < len(cbs) { // cbs[i] called runtime.Goexit
			runEach(cbs[i+1:], v, err)
		}
	}()
	for ; i < len(cbs); i++ {
		if p := run(cbs[i], v, err); panicked == nil {
			panicked = p
		}
	}
	return panicked
}

// run runs cb and returns what it panicked with, or nil. Complete runs every callback even if
// one panics (a WhenAll or Join waiting on f is one of them), then re-raises the panic.
func run[T any](cb func(T, error), v T, err error) (panicked any) {
	defer func() { panicked = recover() }()
	cb(v, err)
	return nil
}

// Done reports whether f has completed.
func (f *Future[T]) Done() bool { return f.done.Load() }

// Result returns f's value and error, and whether f has completed (the zero value and nil
// before).
func (f *Future[T]) Result() (T, error, bool) {
	if !f.done.Load() {
		var zero T
		return zero, nil, false
	}
	return f.val, f.err, true
}

// Get waits until f completes or ctx ends, and returns f's value and error, or the zero value
// and ctx's error if ctx ended first (f itself is unaffected: a later Get can still return
// its result). When ctx is the context the work completing f ends with (MakeCall: a call's own
// ctx), Get waits for that work's end and returns its result. A nil ctx is refused with
// ErrNilContext, unless f has completed.
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	if f.done.Load() {
		return f.val, f.err
	}
	if ctx == nil {
		var zero T
		return zero, ErrNilContext
	}
	f.mu.Lock()
	if f.done.Load() {
		f.mu.Unlock()
		return f.val, f.err
	}
	if f.ch == nil {
		f.ch = make(chan struct{})
	}
	ch := f.ch
	f.mu.Unlock()
	if f.help != nil {
		err := f.help.Wait(ctx, ch)
		if err != nil && f.endsWith(ctx) {
			err = f.help.Wait(context.WithoutCancel(ctx), ch) // the work ends now: its own error
		}
		if err != nil {
			var zero T
			return zero, err
		}
		return f.val, f.err
	}
	select {
	case <-ch:
		return f.val, f.err
	case <-ctx.Done():
		if f.endsWith(ctx) {
			<-ch
			return f.val, f.err
		}
		var zero T
		return zero, ctx.Err()
	}
}

// OnDone arranges for cb to run with f's value and error when f completes: on the goroutine
// that completes it, or at once on the calling goroutine if f has already completed. cb should
// not block for long: for a tarscomm call it runs on an async worker and holds it (a Get or Join
// of a tarscomm call's future in cb does not deadlock: see the package doc). A nil cb is
// skipped.
func (f *Future[T]) OnDone(cb func(v T, err error)) {
	if cb == nil {
		return
	}
	if !f.done.Load() {
		f.mu.Lock()
		if !f.done.Load() {
			if f.first == nil {
				f.first = cb
			} else {
				f.cbs = append(f.cbs, cb)
			}
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
	cb(f.val, f.err)
}

// whenDone runs fn when f completes; it lets Join and WhenAll take futures of any type.
func (f *Future[T]) whenDone(fn func(error)) {
	f.OnDone(func(_ T, err error) { fn(err) })
}

func (f *Future[T]) isNil() bool { return f == nil }

func (f *Future[T]) helper() Helper { return f.help }

// Awaitable is a Future of any value type, for Join and WhenAll. Only *Future[T] implements it.
type Awaitable interface {
	whenDone(fn func(error))
	isNil() bool
	helper() Helper
}

// ErrNilContext is the error of Get and Join given a nil context for a future not completed yet.
var ErrNilContext = errors.New("future: nil context")

// ErrNilFuture is the error of WhenAll and Join given a nil future (a nil Awaitable or a nil
// *Future[T]); the error returned wraps it and names the argument.
var ErrNilFuture = errors.New("future: nil future")

// WhenAll returns a Future that completes once every one of fs has completed, with the error of
// the first of fs (in argument order) that failed, or nil. Its value is the number of futures
// that failed. With no futures it is already complete. Like every Future it costs no goroutine:
// the last of fs to complete completes it. A nil future among fs completes it at once with an
// error matching ErrNilFuture (its value the number of nil futures), waiting for none of fs.
func WhenAll(fs ...Awaitable) *Future[int] {
	all := Make[int]()
	if len(fs) == 0 {
		all.Complete(0, nil)
		return all
	}
	var nils int
	var nilErr error
	for i, f := range fs {
		if f == nil || f.isNil() {
			if nils++; nilErr == nil {
				nilErr = fmt.Errorf("%w: argument %d of %d", ErrNilFuture, i, len(fs))
			}
		}
	}
	if nilErr != nil {
		all.Complete(nils, nilErr)
		return all
	}
	for _, f := range fs {
		if all.help = f.helper(); all.help != nil {
			break // a waiter for all helps as it would for f
		}
	}
	var (
		left   atomic.Int64
		mu     sync.Mutex
		failed int
		errs   = make([]error, len(fs))
	)
	left.Store(int64(len(fs)))
	for i, f := range fs {
		f.whenDone(func(err error) {
			if err != nil {
				mu.Lock()
				errs[i] = err
				failed++
				mu.Unlock()
			}
			if left.Add(-1) == 0 {
				mu.Lock()
				n := failed
				mu.Unlock()
				for _, e := range errs {
					if e != nil {
						all.Complete(n, e)
						return
					}
				}
				all.Complete(0, nil)
			}
		})
	}
	return all
}

// Join waits until every one of fs has completed, or ctx ends; it returns ctx's error in that
// case, else the error of the first of fs (in argument order) that failed, or nil; one matching
// ErrNilFuture at once if one of fs is nil (ErrNilContext for a nil ctx, unless every one of fs
// has completed). Each future's own
// result stays available from its Get or Result.
func Join(ctx context.Context, fs ...Awaitable) error {
	_, err := WhenAll(fs...).Get(ctx)
	return err
}
