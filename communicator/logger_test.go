package communicator_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/faultproxy"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// slogRecorder is a slog.Handler at Info that keeps each record as a map: msg, level, and every
// attribute (those given to WithAttrs first) as its value's string.
type slogRecorder struct {
	mu    *sync.Mutex
	recs  *[]map[string]string
	attrs []slog.Attr
}

func newSlogRecorder() slogRecorder {
	return slogRecorder{mu: new(sync.Mutex), recs: new([]map[string]string)}
}

func (slogRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h slogRecorder) WithGroup(string) slog.Handler              { return h }
func (h slogRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	h.attrs = append(slices.Clip(h.attrs), as...)
	return h
}

func (h slogRecorder) Handle(_ context.Context, r slog.Record) error {
	m := map[string]string{"msg": r.Message, "level": r.Level.String()}
	for _, a := range h.attrs {
		m[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	*h.recs = append(*h.recs, m)
	h.mu.Unlock()
	return nil
}

func (h slogRecorder) records() []map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(*h.recs)
}

// slogComm starts a Communicator logging through a slogRecorder.
func slogComm(t *testing.T) (*communicator.Communicator, slogRecorder) {
	t.Helper()
	endToEnd(t)
	h := newSlogRecorder()
	cfg := conf.Default()
	cfg.NetThread = 1
	c, err := communicator.New(cfg, communicator.WithSlog(slog.New(h)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeComm(t, c) })
	return c, h
}

// TestWithSlogQuiet makes successful calls through a Communicator logging to slog at Info and
// checks that nothing was logged: all is well, so the library says nothing.
func TestWithSlogQuiet(t *testing.T) {
	g := startGreeter(t, "a", serverOpt{})
	c, h := slogComm(t)
	sp := proxyTo(t, c, g)
	for i := range 10 {
		if _, err := sayHello(testCtx(t), sp, "quiet", uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := closeComm(t, c); err != nil {
		t.Fatal(err)
	}
	if rs := h.records(); len(rs) != 0 {
		t.Errorf("%d lines logged while all was well, want none: %v", len(rs), rs)
	}
}

// TestWithSlogWarns calls an endpoint that refuses connections through a Communicator logging
// to slog and checks that the failed connect reaches the handler as a WARN record carrying the
// servant and the endpoint under the library's keys.
func TestWithSlogWarns(t *testing.T) {
	e := startFaultEP(t, "a")
	if err := e.p.Refuse(faultproxy.Closed); err != nil {
		t.Fatal(err)
	}
	c, h := slogComm(t)
	sp := proxyToEPs(t, c, e)
	if _, err := sayHello(testCtx(t), sp, "refused", 1, servantproxy.WithTimeout(5*time.Second)); !errors.Is(err, communicator.ErrConnection) {
		t.Fatalf("err = %v, want ErrConnection", err)
	}
	if err := closeComm(t, c); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range h.records() {
		if r["msg"] != "connect failed" {
			continue
		}
		found = true
		if r["level"] != "WARN" || r["servant"] != servant {
			t.Errorf("record %v: want level WARN, servant %q", r, servant)
		}
		if ep := r["endpoint"]; !strings.Contains(ep, e.p.Addr()[strings.LastIndex(e.p.Addr(), ":")+1:]) {
			t.Errorf("record %v: endpoint does not name the proxy's port (%s)", r, e.p.Addr())
		}
		if r["error"] == "" {
			t.Errorf("record %v: no error", r)
		}
	}
	if !found {
		t.Fatalf("no \"connect failed\" record: %v", h.records())
	}
}
