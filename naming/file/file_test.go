package file

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ep(t *testing.T, s string) endpoint.Endpoint {
	t.Helper()
	e, err := endpoint.ParseEndpoint(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    map[string][]string // object -> endpoints, canonical
		wantErr string
	}{
		{name: "empty", in: "", want: map[string][]string{}},
		{name: "comments and blanks", in: "# c\n\n   \n# d\n", want: map[string][]string{}},
		{
			name: "one object, two endpoints",
			in:   "A@tcp -h 10.0.0.1 -p 1:ssl -h 10.0.0.2 -p 2 -w 5\n",
			want: map[string][]string{"A": {"tcp -h 10.0.0.1 -p 1", "ssl -h 10.0.0.2 -p 2 -w 5"}},
		},
		{
			name: "an object on several lines gets all of them, in order",
			in:   "A@tcp -h a -p 1\nB@tcp -h b -p 2 # trailing comment\nA@tcp -h c -p 3\n",
			want: map[string][]string{"A": {"tcp -h a -p 1", "tcp -h c -p 3"}, "B": {"tcp -h b -p 2"}},
		},
		{name: "no final newline still parses", in: "A@tcp -h a -p 1", want: map[string][]string{"A": {"tcp -h a -p 1"}}},
		{name: "bare object", in: "# x\nA\n", wantErr: "line 2: A has no endpoints"},
		{name: "bad endpoint", in: "A@tcp -h a -p 1\nB@tcp -h b -p 99999\n", wantErr: `line 2: endpoint: bad port "99999"`},
		{name: "missing port", in: "A@tcp -h a\n", wantErr: "line 1: endpoint: missing port (-p)"},
		{name: "object with space", in: "A B@tcp -h a -p 1\n", wantErr: "line 1: endpoint: bad object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse: %v, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Parse = %v, want %v", got, tt.want)
			}
			for obj, eps := range tt.want {
				l := got[obj]
				if len(l.Inactive) != 0 || len(l.Active) != len(eps) {
					t.Fatalf("%s: %+v, want %v", obj, l, eps)
				}
				for i, e := range eps {
					if l.Active[i] != ep(t, e) {
						t.Errorf("%s[%d] = %v, want %v", obj, i, l.Active[i], e)
					}
				}
			}
		})
	}
}

// recorder is a watch's push and fail, recording what they got.
type recorder struct {
	mu    sync.Mutex
	lists []naming.List
	fails []error
	got   chan struct{} // signalled (without blocking) on each push
}

func newRecorder() *recorder { return &recorder{got: make(chan struct{}, 1)} }

func (r *recorder) push(l naming.List) {
	r.mu.Lock()
	r.lists = append(r.lists, l)
	r.mu.Unlock()
	select {
	case r.got <- struct{}{}:
	default:
	}
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	r.fails = append(r.fails, err)
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]naming.List, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]naming.List(nil), r.lists...), append([]error(nil), r.fails...)
}

// ports returns the ports of l's active endpoints, the compact form the tables compare.
func ports(l naming.List) []int {
	out := []int{}
	for _, e := range l.Active {
		out = append(out, e.Port)
	}
	return out
}

// stillSource is a Source whose polls the test runs by hand (reload), with logs observed.
func stillSource(path string) (*Source, *observer.ObservedLogs) {
	core, logs := observer.New(zap.DebugLevel)
	s := &Source{path: path, log: zap.New(core), watches: map[*watch]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	return s, logs
}

// TestApplyRules runs the source's polls by hand over a real file changed between them, step by
// step: each step writes (replaces or appends to) the file, or removes it, then polls once, and
// says which list the watch of object A must have got from that poll (nil: nothing) and how
// many warnings were logged so far.
func TestApplyRules(t *testing.T) {
	const (
		a1 = "A@tcp -h 127.0.0.1 -p 40123\n"
		a2 = "A@tcp -h 127.0.0.1 -p 40124\n"
	)
	type step struct {
		write, add string // replace the file with write, or append add (both "": leave it)
		empty      bool   // replace the file with an empty one
		remove     bool
		push       []int // the ports pushed by this poll; nil: no push
		warnings   int   // warnings logged so far
		failed     bool  // the watch was told a problem by this poll
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "a complete content is applied on its second read",
			steps: []step{
				{write: a1},
				{push: []int{40123}},
				{}, {}, // unchanged: nothing more
			},
		},
		{
			name: "a line cut by a write in progress is never applied, its completion is",
			steps: []step{
				{write: "# naming\nA@tcp -h 127.0.0.1 -p 40"},
				{warnings: 1, failed: true}, // read the same twice: incomplete, logged once
				{warnings: 1},
				{warnings: 1},
				{add: "123\n", warnings: 1},
				{push: []int{40123}, warnings: 1},
			},
		},
		{
			name: "a cut at a line boundary while the writer still writes is not applied",
			steps: []step{
				{write: a1},
				{add: a2}, // changed before a second read: the first content never applies
				{push: []int{40123, 40124}},
			},
		},
		{
			name: "a parse error keeps the last good list and is logged once",
			steps: []step{
				{write: a1},
				{push: []int{40123}},
				{write: "A@tcp -h 127.0.0.1 -p x\n"},
				{warnings: 1},
				{warnings: 1}, {warnings: 1},
				{write: a2, warnings: 1},
				{push: []int{40124}, warnings: 1},
			},
		},
		{
			name: "a removed file keeps the last good list and is logged once; its return applies",
			steps: []step{
				{write: a1},
				{push: []int{40123}},
				{remove: true, warnings: 1},
				{warnings: 1},
				{write: a1, warnings: 1}, // the applied content again: nothing to push
				{warnings: 1},
				{write: a2, warnings: 1},
				{push: []int{40124}, warnings: 1},
			},
		},
		{
			name: "a file without A, then emptied: A gets the empty list",
			steps: []step{
				{write: "B@tcp -h 127.0.0.1 -p 1\n"},
				{push: []int{}},
				{write: a1},
				{push: []int{40123}},
				{empty: true},
				{push: []int{}},
			},
		},
		{
			name: "a missing file is told to the watch once, before any content",
			steps: []step{
				{remove: true, warnings: 1, failed: true},
				{warnings: 1},
				{write: a1, warnings: 1},
				{push: []int{40123}, warnings: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "naming.txt")
			s, logs := stillSource(path)
			rec := newRecorder()
			stop := s.WatchReporting(naming.Query{Object: "A"}, rec.push, rec.fail)
			defer stop()
			for i, st := range tt.steps {
				switch {
				case st.remove:
					if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
						t.Fatal(err)
					}
				case st.add != "":
					f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := f.WriteString(st.add); err != nil {
						t.Fatal(err)
					}
					if err := f.Close(); err != nil {
						t.Fatal(err)
					}
				case st.write != "" || st.empty:
					if err := os.WriteFile(path, []byte(st.write), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				before, beforeFails := rec.snapshot()
				s.reload()
				after, afterFails := rec.snapshot()
				switch {
				case st.push == nil && len(after) != len(before):
					t.Fatalf("step %d: pushed %v, want no push", i, ports(after[len(after)-1]))
				case st.push != nil && len(after) != len(before)+1:
					t.Fatalf("step %d: %d pushes, want one of %v", i, len(after)-len(before), st.push)
				case st.push != nil:
					if got := ports(after[len(after)-1]); !equalInts(got, st.push) {
						t.Fatalf("step %d: pushed %v, want %v", i, got, st.push)
					}
				}
				if n := logs.FilterLevelExact(zap.WarnLevel).Len(); n != st.warnings {
					t.Fatalf("step %d: %d warnings logged, want %d: %v", i, n, st.warnings, logs.All())
				}
				if told := len(afterFails) > len(beforeFails); told != st.failed {
					t.Fatalf("step %d: watch told a problem: %v (%v), want %v", i, told, afterFails, st.failed)
				}
				if st.failed && !strings.Contains(afterFails[len(afterFails)-1].Error(), path) {
					t.Fatalf("step %d: problem %q does not name the file", i, afterFails[len(afterFails)-1])
				}
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWrittenInPieces rewrites a followed file in place, as a writer without rename does: the
// first piece ends in the middle of the port ("-p 40" of "-p 40123") and stays there for three
// polls before the rest is written. The watch never gets port 40: it keeps the old list until
// the new one is complete. Before the fix, port 40 was pushed.
func TestWrittenInPieces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "naming.txt")
	if err := os.WriteFile(path, []byte("A@tcp -h 127.0.0.1 -p 40000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := newRecorder()
	stop := s.Watch(naming.Query{Object: "A"}, rec.push)
	defer stop()
	waitPorts := func(want int) {
		t.Helper()
		deadline := time.After(10 * time.Second) // liveness only
		for {
			lists, _ := rec.snapshot()
			if n := len(lists); n > 0 && equalInts(ports(lists[n-1]), []int{want}) {
				return
			}
			select {
			case <-rec.got:
			case <-deadline:
				t.Fatalf("the watch did not get port %d; it got %v", want, lists)
			}
		}
	}
	waitPorts(40000)

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("# rewritten in place\nA@tcp -h 127.0.0.1 -p 40"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * pollInterval) // the cut file is read (at least) twice in a row
	if _, err := f.WriteString("123\n"); err != nil {
		t.Fatal(err)
	}
	waitPorts(40123)
	lists, _ := rec.snapshot()
	for _, l := range lists {
		if p := ports(l); !equalInts(p, []int{40000}) && !equalInts(p, []int{40123}) {
			t.Fatalf("the watch got %v from a half-written file; all pushes: %v", p, lists)
		}
	}
}

// TestOpen: Open refuses, naming the file, what New would wait for.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, data string // data "": no file
		wantErr    string
	}{
		{name: "missing", wantErr: "no such file"},
		{name: "cut", data: "A@tcp -h a -p 4", wantErr: "does not end in a newline"},
		{name: "bad", data: "A@tcp -h a -p 4\nB@udp\n", wantErr: "line 2"},
		{name: "good", data: "A@tcp -h a -p 4\n"},
		{name: "empty", data: "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if tt.data != "" {
				if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(path, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				_ = s.Close()
				return
			}
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open(%s) succeeded, want %q", tt.name, tt.wantErr)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Open: %v; want it to name %s and say %q", err, path, tt.wantErr)
			}
		})
	}
}

// TestCloseStopsPushes: after Close and stop, changes reach no watch.
func TestCloseStopsPushes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "naming.txt")
	s := New(path, nil) // the file does not exist yet
	rec := newRecorder()
	stop := s.Watch(naming.Query{Object: "A"}, rec.push)
	if err := os.WriteFile(path, []byte("A@tcp -h a -p 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rec.got:
	case <-time.After(10 * time.Second):
		t.Fatal("a file created after New was not followed")
	}
	stop()
	_ = s.Close()
	n := len(func() []naming.List { l, _ := rec.snapshot(); return l }())
	if err := os.WriteFile(path, []byte("A@tcp -h a -p 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.reload() // as a poll would, had Close not stopped them
	if l, _ := rec.snapshot(); len(l) != n {
		t.Fatalf("a push after stop and Close: %v", l)
	}
}

// TestSets: watches with a set get the endpoints of their set (naming.SelectSet), a watch
// without one gets every endpoint; a change that moves an endpoint between sets reaches the
// watches whose selection changed (the endpoint itself, its -s, changed for the watches that
// list it whatever the set) and no other.
func TestSets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "naming.txt")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("A@tcp -h a -p 1 -s app.sz.1:tcp -h a -p 2 -s app.sz.2:tcp -h a -p 3 -s app.sh.1\nA@tcp -h a -p 4\n")
	s, _ := stillSource(path)
	s.reload()
	s.reload() // read twice: applied
	watches := map[string]*recorder{}
	for _, set := range []string{"", "app.sz.1", "app.sz.*", "app.sz.3", "nope.sz.1"} {
		r := newRecorder()
		watches[set] = r
		defer s.Watch(naming.Query{Object: "A", Set: set}, r.push)()
	}
	check := func(step string, want map[string][][]int) {
		t.Helper()
		for set, w := range want {
			got, _ := watches[set].snapshot()
			var gotPorts [][]int
			for _, l := range got {
				gotPorts = append(gotPorts, ports(l))
			}
			if len(gotPorts) != len(w) {
				t.Errorf("%s: set %q got %v, want %v", step, set, gotPorts, w)
				continue
			}
			for i := range w {
				if !equalInts(gotPorts[i], w[i]) {
					t.Errorf("%s: set %q got %v, want %v", step, set, gotPorts, w)
				}
			}
		}
	}
	check("first", map[string][][]int{
		"":          {{1, 2, 3, 4}},
		"app.sz.1":  {{1}},
		"app.sz.*":  {{1, 2}},
		"app.sz.3":  {{}},
		"nope.sz.1": {{1, 2, 3, 4}},
	})
	// 3 moves from app.sh.1 to app.sz.3: app.sz.1 is not told.
	write("A@tcp -h a -p 1 -s app.sz.1:tcp -h a -p 2 -s app.sz.2:tcp -h a -p 3 -s app.sz.3\nA@tcp -h a -p 4\n")
	s.reload()
	s.reload()
	check("after 3 moved to app.sz.3", map[string][][]int{
		"":          {{1, 2, 3, 4}, {1, 2, 3, 4}},
		"app.sz.1":  {{1}},
		"app.sz.*":  {{1, 2}, {1, 2, 3}},
		"app.sz.3":  {{}, {3}},
		"nope.sz.1": {{1, 2, 3, 4}, {1, 2, 3, 4}},
	})
}
