package servantproxy

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

func TestAddSat(t *testing.T) {
	for _, tc := range []struct{ a, b, want int64 }{
		{1, 2, 3},
		{math.MaxInt64 - 1, 5, math.MaxInt64},
		{5, math.MaxInt64, math.MaxInt64},
		{math.MinInt64 + 1, -5, math.MinInt64},
		{-5, 3, -2},
	} {
		if got := addSat(tc.a, tc.b); got != tc.want {
			t.Errorf("addSat(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestDeadlineOf(t *testing.T) {
	const now = int64(1e12)
	far, cancel1 := context.WithDeadline(context.Background(), time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC))
	defer cancel1()
	near, cancel2 := context.WithTimeout(context.Background(), time.Hour)
	defer cancel2()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		timeout time.Duration
		ok      func(d int64) bool
	}{
		{"timeout only", context.Background(), time.Second, func(d int64) bool { return d == now+int64(time.Second) }},
		{"max timeout saturates", context.Background(), math.MaxInt64, func(d int64) bool { return d == math.MaxInt64 }},
		{"year 2500 ctx, max timeout", far, math.MaxInt64, func(d int64) bool { return d == math.MaxInt64 }},
		{"year 2500 ctx, 1s timeout", far, time.Second, func(d int64) bool { return d == now+int64(time.Second) }},
		{"ctx earlier wins", near, 2 * time.Hour, func(d int64) bool { return d > now && d <= now+int64(time.Hour) }},
	} {
		if d := deadlineOf(tc.ctx, now, tc.timeout); !tc.ok(d) || d <= now {
			t.Errorf("%s: deadline %d (now %d)", tc.name, d, now)
		}
	}
}

func TestRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		left time.Duration
		want int32
	}{
		{-time.Second, 1},
		{0, 1},
		{time.Nanosecond, 1},
		{time.Millisecond, 1},
		{time.Millisecond + time.Nanosecond, 2},
		{1500 * time.Microsecond, 2},
		{3 * time.Second, 3000},
		{3*time.Second - time.Nanosecond, 3000},
		{math.MaxInt64 - 10, math.MaxInt32},
	} {
		if got := codec.RequestTimeout(time.Duration(addSat(10, int64(tc.left)) - 10)); got != tc.want {
			t.Errorf("RequestTimeout(%v) = %d, want %d", tc.left, got, tc.want)
		}
	}
}

func TestCollectOptions(t *testing.T) {
	if o := collect(nil); o != &noOptions {
		t.Error("no options must share noOptions")
	}
	o := collect([]CallOption{WithTimeout(time.Second), WithHash(7), WithDyeing("k")})
	if o.timeout != time.Second || !o.hashed || o.hash != 7 || !o.dyed || o.dyeKey != "k" || !o.timed {
		t.Errorf("options collected wrong: %+v", o)
	}
	for _, d := range []time.Duration{0, -time.Second} {
		o := collect([]CallOption{WithTimeout(d)})
		if err := (&proxy{name: "S"}).misuse("f", o); !errors.Is(err, ErrInvalidTimeout) {
			t.Errorf("WithTimeout(%v): err %v, want ErrInvalidTimeout", d, err)
		}
	}
	if noOptions.timed || noOptions.timeout != 0 || noOptions.hashed {
		t.Error("noOptions was changed")
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimit(0)
	for range 3 {
		if !l.acquire() {
			t.Fatal("no limit refused")
		}
	}
	l = NewLimit(2)
	got := []bool{l.acquire(), l.acquire(), l.acquire()}
	if !got[0] || !got[1] || got[2] {
		t.Fatalf("max 2: acquires %v, want two slots, then a refusal", got)
	}
	l.release()
	if !l.acquire() {
		t.Fatal("a released slot was not reusable")
	}
	l.release()
	l.release()
	if n := l.n.Load(); n != 0 {
		t.Fatalf("in flight %d, want 0", n)
	}
}

func TestBackupBudget(t *testing.T) {
	if newBackup(0, 0.5, nil) != nil {
		t.Fatal("backup without delay")
	}
	b := newBackup(time.Millisecond, 0, []string{"f"})
	if b.ratio != 0.1 || !b.eligible("f") || b.eligible("g") {
		t.Fatalf("backup %+v", b)
	}
	n := 0
	for b.take() {
		n++
	}
	if n != backupBurst+int(0.1*backupWindow) || b.denied.Load() != 1 {
		t.Fatalf("took %d backups from a full budget (denied %d)", n, b.denied.Load())
	}
	for range 10 {
		b.deposit()
	}
	if !b.take() || b.take() {
		t.Fatal("10 calls at ratio 0.1 must earn exactly one backup")
	}
}

// BenchmarkWatched: what deciding whether a call watches its ctx costs, for the ctxs callers
// pass (a server handler's is measured in package server's tests and the relay benchmarks).
func BenchmarkWatched(b *testing.B) {
	type key struct{}
	timeout, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"background", context.Background()},
		{"timeout", timeout},
		{"values-on-timeout", context.WithValue(context.WithValue(timeout, key{}, 1), key{}, 2)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_ = watched(tc.ctx)
			}
		})
	}
}
