package registry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/naming"
)

// cache is the endpoint-cache file: a JSON object mapping "<locator>|<obj>[|<set>]" to the
// last good answer, endpoints in their TARS string form:
//
//	{"<key>": {"active": ["tcp -h 10.0.0.1 -p 1 -t 60000"], "inactive": []}}
//
// The locator part is the locator's endpoints sorted, so that listing them in another order
// keeps the entries. The file is rewritten (through a temporary file, synced, and a rename)
// when an answer differs from the cached one, merged with what the file holds then: several
// Registries may share it. (Processes sharing it do not lock it: two rewriting it at the same
// moment may lose one's change, which its next answer that differs writes again.)
type cache struct {
	path    string
	locator string

	mu      sync.Mutex
	entries map[string]cacheEntry // nil until read
	seen    fileStamp             // the file's as entries were read or written
}

// fileStamp tells whether a file changed since it was read: another Registry or process sharing
// it may have rewritten it.
type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
}

type cacheEntry struct {
	Active   []string `json:"active"`
	Inactive []string `json:"inactive"`
}

func newCache(path, locator string) *cache {
	return &cache{path: path, locator: normalizeLocator(locator)}
}

// normalizeLocator sorts the locator's endpoints.
func normalizeLocator(s string) string {
	t, err := endpoint.Parse(s)
	if err != nil {
		return s
	}
	eps := make([]string, 0, len(t.Endpoints))
	for _, e := range t.Endpoints {
		eps = append(eps, e.String())
	}
	slices.Sort(eps)
	return t.Object + "@" + strings.Join(eps, ":")
}

func (c *cache) key(q naming.Query) string {
	k := c.locator + "|" + q.Object
	if q.Set != "" {
		k += "|" + q.Set
	}
	return k
}

// read loads the file, again whenever it changed since (another Registry or process sharing it
// wrote it); a missing or unreadable file is an empty cache.
func (c *cache) read() {
	if st := stampOf(c.path); c.entries == nil || st != c.seen {
		c.entries, c.seen = readEntries(c.path), st
	}
}

// readEntries returns the entries of the file at path; a missing or unreadable file has none.
func readEntries(path string) map[string]cacheEntry {
	entries := map[string]cacheEntry{}
	data, err := os.ReadFile(path)
	if err != nil {
		return entries
	}
	if json.Unmarshal(data, &entries) != nil || entries == nil {
		return map[string]cacheEntry{}
	}
	return entries
}

// fileLocks holds a mutex per cache file path: the Registries of this process that share a file
// take turns to read, merge and rewrite it.
var fileLocks sync.Map

func (c *cache) load(q naming.Query) (naming.List, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read()
	e, ok := c.entries[c.key(q)]
	if !ok {
		return naming.List{}, false
	}
	l := naming.List{Active: parseAll(e.Active), Inactive: parseAll(e.Inactive)}
	return l, len(l.Active) > 0
}

func parseAll(ss []string) []endpoint.Endpoint {
	var out []endpoint.Endpoint
	for _, s := range ss {
		if e, err := endpoint.ParseEndpoint(s); err == nil {
			out = append(out, e)
		}
	}
	return out
}

func formatAll(eps []endpoint.Endpoint) []string {
	out := make([]string, 0, len(eps))
	for _, e := range eps {
		out = append(out, e.String())
	}
	return out
}

func (c *cache) store(q naming.Query, l naming.List) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.read()
	e := cacheEntry{Active: formatAll(l.Active), Inactive: formatAll(l.Inactive)}
	k := c.key(q)
	if old, ok := c.entries[k]; ok && slices.Equal(old.Active, e.Active) && slices.Equal(old.Inactive, e.Inactive) {
		return nil
	}
	// Other Registries may share the file, each writing its own locator's keys: the entry is
	// merged into what the file holds now, not into what it held when this one first read it.
	fl, _ := fileLocks.LoadOrStore(c.path, new(sync.Mutex))
	fl.(*sync.Mutex).Lock()
	defer fl.(*sync.Mutex).Unlock()
	entries := readEntries(c.path)
	entries[k] = e
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), filepath.Base(c.path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil { // on disk before the rename makes it the cache
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	st := stampOf(tmp.Name()) // the file's once renamed: a rewrite by another after it differs
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	// Only what is on disk counts as stored: after a failed write the next answer, the same
	// or not, is written again.
	c.entries, c.seen = entries, st
	return nil
}
