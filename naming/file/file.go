package file

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// pollInterval is how often the file is checked for changes.
const pollInterval = 250 * time.Millisecond

// Source is a naming.Source over one file. Close stops it. Safe for concurrent use.
type Source struct {
	path string
	log  *zap.Logger

	mu      sync.Mutex
	lists   map[string]naming.List // by object; nil until the file was read once
	last    []byte
	watches map[*watch]struct{}

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type watch struct {
	obj  string
	push func(naming.List)
	mu   sync.Mutex // serialises pushes of this watch
}

// New starts following path (log may be nil). The file need not exist yet.
func New(path string, log *zap.Logger) *Source {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Source{path: path, log: log.Named("naming-file"), watches: map[*watch]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	s.reload()
	go s.poll()
	return s
}

// Parse reads the file format (see the package documentation) into lists by object.
func Parse(data []byte) (map[string]naming.List, error) {
	out := map[string]naming.List{}
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
		l := out[t.Object]
		l.Active = append(l.Active, t.Endpoints...)
		out[t.Object] = l
	}
	return out, sc.Err()
}

// reload reads the file and pushes the lists that changed.
func (s *Source) reload() {
	data, err := os.ReadFile(s.path)
	if err != nil {
		s.log.Debug("naming file not readable", zap.Error(err))
		return
	}
	s.mu.Lock()
	if s.lists != nil && bytes.Equal(data, s.last) {
		s.mu.Unlock()
		return
	}
	lists, err := Parse(data)
	if err != nil {
		s.mu.Unlock()
		s.log.Warn("naming file not loaded; keeping its last contents", zap.String("path", s.path), zap.Error(err))
		return
	}
	old := s.lists
	s.lists, s.last = lists, data
	var due []*watch
	for w := range s.watches {
		if old == nil || !old[w.obj].Equal(lists[w.obj]) {
			due = append(due, w)
		}
	}
	s.mu.Unlock()
	for _, w := range due {
		s.deliver(w)
	}
}

// deliver pushes w's current list.
func (s *Source) deliver(w *watch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s.mu.Lock()
	_, live := s.watches[w]
	l := s.lists[w.obj]
	s.mu.Unlock()
	if live {
		w.push(l)
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
	w := &watch{obj: q.Object, push: push}
	s.mu.Lock()
	s.watches[w] = struct{}{}
	known := s.lists != nil
	s.mu.Unlock()
	if known {
		s.deliver(w)
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
