package file

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// pollInterval is how often the file is read.
const pollInterval = 250 * time.Millisecond

// errIncomplete is the problem of a content whose last line has no newline.
var errIncomplete = errors.New("last line does not end in a newline: incomplete (a write in progress?), not applied")

// Source is a naming.Source (and naming.Reporter) over one file. Close stops it. Safe for
// concurrent use.
type Source struct {
	path string
	log  *zap.Logger

	mu      sync.Mutex
	lists   map[string]naming.List // by object; nil until a content was applied
	applied []byte                 // the content of lists
	seen    []byte                 // the last content read, when not applied: applied if read again
	seenOK  bool                   // seen holds a read
	problem error                  // the last problem logged (and reported); nil after a success
	watches map[*watch]struct{}

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type watch struct {
	q    naming.Query
	push func(naming.List)
	fail func(error) // nil: not a reporting watch
	mu   sync.Mutex  // serialises the calls of push and fail of this watch
}

// New starts following path (log may be nil). The file need not exist yet: until it can be read
// and is complete, watches get no list (their calls wait), and are told why.
func New(path string, log *zap.Logger) *Source { return start(path, log, nil, false) }

// start makes the Source and starts its polls; seen, when seenOK, is a read of the file just
// made, which the first reload's applies at once if it reads the same.
func start(path string, log *zap.Logger, seen []byte, seenOK bool) *Source {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Source{path: path, log: log.Named("naming-file"), watches: map[*watch]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	s.seen, s.seenOK = seen, seenOK
	s.reload()
	go s.poll()
	return s
}

// Open is New for a file that must be usable now: it returns an error naming path if the file
// cannot be read, is incomplete (see the package documentation) or does not parse. Its read
// counts as the first of the two that apply a content, so the file is applied at once (before
// Open returns) unless it changed in between.
func Open(path string, log *zap.Logger) (*Source, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		_, err = check(data)
	}
	if err != nil {
		return nil, fmt.Errorf("naming file %q: %w", path, err)
	}
	return start(path, log, data, true), nil
}

// complete reports whether data may be a whole file: it is empty or ends in a newline.
func complete(data []byte) bool {
	return len(data) == 0 || data[len(data)-1] == '\n'
}

// check parses data, requiring it to be complete.
func check(data []byte) (map[string]naming.List, error) {
	if !complete(data) {
		return nil, errIncomplete
	}
	return Parse(data)
}

// Parse reads the file format (see the package documentation) into lists by object. It does not
// require a final newline; Source does. A UTF-8 byte order mark at the start (some editors save
// one) is skipped: it would be read as part of the first object's name.
func Parse(data []byte) (map[string]naming.List, error) {
	out := map[string]naming.List{}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		t, err := endpoint.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if len(t.Endpoints) == 0 {
			return nil, fmt.Errorf("line %d: %s has no endpoints", n, t.Object)
		}
		for _, ep := range t.Endpoints {
			if p := endpoint.SetDivisionProblem(ep.SetDivision); ep.SetDivision != "" && p != "" {
				return nil, fmt.Errorf("line %d: endpoint %q: set %q: %s", n, ep.String(), ep.SetDivision, p)
			}
		}
		l := out[t.Object]
		l.Active = append(l.Active, t.Endpoints...)
		out[t.Object] = l
	}
	return out, sc.Err()
}

// reload reads the file and applies its content if it is complete and was read the same the
// time before; it then pushes the lists that changed.
func (s *Source) reload() {
	data, err := os.ReadFile(s.path)
	s.mu.Lock()
	var lists map[string]naming.List
	switch {
	case err != nil:
		s.seen, s.seenOK = nil, false
	case s.lists != nil && bytes.Equal(data, s.applied):
		s.seen, s.seenOK = nil, false // back to (or still) the applied content
		s.problem = nil
		s.mu.Unlock()
		return
	case !s.seenOK || !bytes.Equal(data, s.seen):
		// New: judged when the next read returns it again (a write in progress is not
		// worth a warning).
		s.seen, s.seenOK = data, true
		s.mu.Unlock()
		return
	default:
		lists, err = check(data)
	}
	if err != nil {
		fails := s.noteProblem(err)
		s.mu.Unlock()
		for _, w := range fails {
			s.report(w, err)
		}
		return
	}
	old := s.lists
	s.lists, s.applied, s.seen, s.seenOK, s.problem = lists, data, nil, false, nil
	var due []*watch
	for w := range s.watches {
		if old == nil || !w.selected(old).Equal(w.selected(lists)) {
			due = append(due, w)
		}
	}
	s.mu.Unlock()
	for _, w := range due {
		s.deliver(w)
	}
}

// noteProblem logs err unless it is the problem logged last, and returns the watches to tell:
// every reporting watch while no content was applied, none after. Called with s.mu held.
func (s *Source) noteProblem(err error) []*watch {
	if s.problem != nil && s.problem.Error() == err.Error() {
		return nil
	}
	s.problem = err
	if s.lists != nil {
		s.log.Warn("naming file not applied; keeping its last good contents", zap.String("path", s.path), zap.Error(err))
		return nil
	}
	s.log.Warn("naming file not applied; its objects have no endpoint list yet", zap.String("path", s.path), zap.Error(err))
	var out []*watch
	for w := range s.watches {
		if w.fail != nil {
			out = append(out, w)
		}
	}
	return out
}

// deliver pushes w's current list.
func (s *Source) deliver(w *watch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s.mu.Lock()
	_, live := s.watches[w]
	l := w.selected(s.lists)
	s.mu.Unlock()
	if live {
		w.push(l)
	}
}

// selected returns w's list in lists: its object's endpoints, of its set (naming.SelectSet).
func (w *watch) selected(lists map[string]naming.List) naming.List {
	l := lists[w.q.Object]
	return naming.List{Active: naming.SelectSet(l.Active, w.q.Set)}
}

// report tells w the file's problem.
func (s *Source) report(w *watch, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s.mu.Lock()
	_, live := s.watches[w]
	s.mu.Unlock()
	if live {
		w.fail(fmt.Errorf("naming file %q: %w", s.path, err))
	}
}

func (s *Source) poll() {
	defer close(s.done)
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.reload()
		}
	}
}

// Watch implements naming.Source.
func (s *Source) Watch(q naming.Query, push func(naming.List)) (stop func()) {
	return s.WatchReporting(q, push, nil)
}

// WatchReporting implements naming.Reporter: Watch, and fail (if not nil) is told the file's
// problem while no content has been applied.
func (s *Source) WatchReporting(q naming.Query, push func(naming.List), fail func(error)) (stop func()) {
	w := &watch{q: q, push: push, fail: fail}
	s.mu.Lock()
	s.watches[w] = struct{}{}
	known, problem := s.lists != nil, s.problem
	s.mu.Unlock()
	switch {
	case known:
		s.deliver(w)
	case problem != nil && fail != nil:
		s.report(w, problem)
	}
	return func() {
		w.mu.Lock() // waits for a push in progress; none starts after
		s.mu.Lock()
		delete(s.watches, w)
		s.mu.Unlock()
		w.mu.Unlock()
	}
}

// Close stops following the file. Watches get no push after it returns.
func (s *Source) Close() error {
	s.once.Do(func() {
		close(s.stop)
		<-s.done
	})
	return nil
}
