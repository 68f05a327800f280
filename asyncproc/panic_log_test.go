package asyncproc

import (
	"math"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/internal/call"
)

// TestCallbackPanicLogLimited: callbacks that panic on every reply are all counted (Panics) and
// logged at most once a second, each line saying how many panics it stands for: after 200
// panics, a pause of more than a second and one more, the lines account for all 201. Before,
// each panic wrote a line with its stack.
func TestCallbackPanicLogLimited(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	p := newPool(t, Options{Workers: 2, QueueCap: 1024, Log: zap.New(core)})
	defer p.Close()
	const calls = 200
	start := time.Now()
	deliver := func(n int) {
		for range n {
			if err := p.Reserve(); err != nil {
				t.Fatal(err)
			}
			p.Deliver(&call.Call{Finish: func(*call.Call) { panic("boom") }})
		}
	}
	wait := func(n int64) {
		deadline := time.Now().Add(10 * time.Second)
		for p.Panics() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d callbacks panicked in 10 s, want %d", p.Panics(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	deliver(calls)
	wait(calls)
	time.Sleep(1100 * time.Millisecond) // past the interval: the next is logged
	deliver(1)
	wait(calls + 1)
	elapsed := time.Since(start)
	deadline := time.Now().Add(10 * time.Second) // the line is written after Panics counts it
	var lines []observer.LoggedEntry
	for {
		lines = logs.FilterMessage("async callback panicked").All()
		stood := uint64(0)
		for _, l := range lines {
			stood++
			if n, ok := l.ContextMap()["suppressed"].(uint64); ok {
				stood += n
			}
		}
		if stood == calls+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %d lines stand for %d panics (1 each, plus their suppressed), want %d", len(lines), stood, calls+1)
		}
		time.Sleep(time.Millisecond)
	}
	if most := 1 + int(math.Ceil(elapsed.Seconds())); len(lines) < 2 || len(lines) > most {
		t.Errorf("%d panics in %v logged in %d lines, want 2 to %d (one a second at most)", calls+1, elapsed.Round(time.Millisecond), len(lines), most)
	}
}
