package docstest

// What TestGoBlocks and TestTOMLBlocks do not see: the API names and configuration keys the
// documents' prose writes in backquotes (`communicator.WithNaming(src)`, `Server.DroppedDatagrams`,
// `max-packet-size`, `enableset = true`). A renamed function or key leaves such a reference wrong
// while every block still compiles. This test checks each one against the source:
//
//   - `pkg.Name` where pkg is a package of the repository (by its package name): Name is
//     declared at the top level of a package of that name;
//   - `Type.Member` where Type is an exported type of the repository: Member is one of its
//     methods or fields (of Type or of a type it embeds);
//   - `recv.Member` for the receivers the documents use (comm, srv, sp, cur, prx, cfg, r, reg):
//     Member exists on the type the text gives them;
//   - `ErrX`: some package declares ErrX;
//   - a hyphenated key (`max-packet-size`) or `key = value`: the key is one of conf's toml tags,
//     or a key of the other formats the documents name (devregistry's file, the query options
//     of dns://).
//
// Before, ARCHITECTURE.md named `Call.Abandon`, a method gone (found by the newcomer review).

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// apiIndex is what the repository declares.
type apiIndex struct {
	top     map[string]map[string]bool // package name -> exported top-level names
	members map[string]map[string]bool // type name -> methods and fields (any package)
	embeds  map[string][]string        // type name -> embedded type names
	keys    map[string]bool            // conf's toml keys
}

func buildIndex(t *testing.T, root string) *apiIndex {
	ix := &apiIndex{top: map[string]map[string]bool{}, members: map[string]map[string]bool{},
		embeds: map[string][]string{}, keys: map[string]bool{}}
	tagRE := regexp.MustCompile(`toml:"([^",]+)`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch filepath.Base(p) {
			case ".git", "testdata", "benchmarks", "interop", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		pkg := f.Name.Name
		if ix.top[pkg] == nil {
			ix.top[pkg] = map[string]bool{}
		}
		add := func(typ, m string) {
			if ix.members[typ] == nil {
				ix.members[typ] = map[string]bool{}
			}
			ix.members[typ][m] = true
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					ix.top[pkg][d.Name.Name] = true
					continue
				}
				rt := d.Recv.List[0].Type
				if s, ok := rt.(*ast.StarExpr); ok {
					rt = s.X
				}
				if ix, ok := rt.(*ast.IndexExpr); ok { // generic receiver
					rt = ix.X
				}
				if ix, ok := rt.(*ast.IndexListExpr); ok {
					rt = ix.X
				}
				if id, ok := rt.(*ast.Ident); ok {
					add(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							ix.top[pkg][n.Name] = true
						}
					case *ast.TypeSpec:
						ix.top[pkg][s.Name.Name] = true
						typ := s.Name.Name
						if ix.members[typ] == nil {
							ix.members[typ] = map[string]bool{}
						}
						st, ok := s.Type.(*ast.StructType)
						if !ok {
							if it, ok := s.Type.(*ast.InterfaceType); ok {
								for _, m := range it.Methods.List {
									for _, n := range m.Names {
										add(typ, n.Name)
									}
								}
							}
							continue
						}
						for _, fl := range st.Fields.List {
							if fl.Tag != nil && strings.HasPrefix(rel, "conf"+string(filepath.Separator)) {
								if m := tagRE.FindStringSubmatch(fl.Tag.Value); m != nil {
									ix.keys[m[1]] = true
								}
							}
							if len(fl.Names) == 0 { // embedded
								e := fl.Type
								if s, ok := e.(*ast.StarExpr); ok {
									e = s.X
								}
								switch e := e.(type) {
								case *ast.Ident:
									ix.embeds[typ] = append(ix.embeds[typ], e.Name)
								case *ast.SelectorExpr:
									ix.embeds[typ] = append(ix.embeds[typ], e.Sel.Name)
								}
							}
							for _, n := range fl.Names {
								add(typ, n.Name)
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func (ix *apiIndex) hasMember(typ, m string, depth int) bool {
	if ix.members[typ][m] {
		return true
	}
	if depth > 3 {
		return false
	}
	for _, e := range ix.embeds[typ] {
		if ix.hasMember(e, m, depth+1) {
			return true
		}
	}
	return false
}

// receivers: the variables the documents' prose calls methods on, and their types.
var receivers = map[string]string{
	"comm": "Communicator", "srv": "Server", "srvs": "Servers", "sp": "ServantProxy",
	"cur": "Current", "cfg": "Config", "r": "Registry", "prx": "GreeterProxy", "q": "QueryFProxy",
}

// otherKeys are keys of formats that are not conf's: tarsregistry's file, dns:// query options,
// TARS endpoint and registry fields, protobuf options, TarsCpp's own configuration.
var otherKeys = map[string]bool{
	"objects": true, "inactive": true, "groups": true, // devregistry's file
	"interval": true, "timeout": true, "resolver": true, // dns:// options
	"idempotency_level": true, "istcp": true,
	"least-inflight": true, // a load-balance value
}

func TestDocRefs(t *testing.T) {
	root := repoRoot(t)
	ix := buildIndex(t, root)
	if len(ix.keys) < 40 {
		t.Fatalf("found %d toml keys in conf: the index is wrong", len(ix.keys))
	}
	std := map[string]bool{"context": true, "errors": true, "fmt": true, "http": true, "log": true,
		"net": true, "os": true, "signal": true, "slog": true, "strings": true, "sync": true, "syscall": true,
		"time": true, "tls": true, "math": true, "runtime": true, "atomic": true, "gnet": true, "zap": true,
		"prometheus": false}
	selRE := regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9_]*)`)
	errRE := regexp.MustCompile(`^\*?(Err[A-Z][A-Za-z0-9]*)$`)
	hyphenKeyRE := regexp.MustCompile(`^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$`)
	assignRE := regexp.MustCompile(`^([a-z][a-z0-9_-]*)\s*=\s*\S`)
	spanRE := regexp.MustCompile("`([^`\n]+)`")

	var files []string
	for _, g := range documents {
		m, _ := filepath.Glob(filepath.Join(root, g))
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		fence := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
				fence = !fence
				continue
			}
			if fence { // the blocks are docs_test.go's
				continue
			}
			for _, sm := range spanRE.FindAllStringSubmatch(line, -1) {
				span := strings.TrimSpace(sm[1])
				where := rel + ":" + itoa(i+1)
				if m := errRE.FindStringSubmatch(span); m != nil {
					found := false
					for _, names := range ix.top {
						found = found || names[m[1]]
					}
					if !found {
						t.Errorf("%s: `%s`: no package declares %s", where, span, m[1])
					}
				}
				if hyphenKeyRE.MatchString(span) && !ix.keys[span] && !otherKeys[span] {
					t.Errorf("%s: `%s` reads as a configuration key, and conf has no such key", where, span)
				}
				if m := assignRE.FindStringSubmatch(span); m != nil && !ix.keys[m[1]] && !otherKeys[m[1]] {
					t.Errorf("%s: `%s`: conf has no key %q", where, span, m[1])
				}
				if strings.Contains(span, "://") || strings.Contains(span, "@tcp") || strings.Contains(span, "@ssl") {
					continue // proxy strings and URLs: their dots are not Go
				}
				for _, m := range selRE.FindAllStringSubmatch(span, -1) {
					x, name := m[1], m[2]
					switch {
					case std[x]:
					case ix.top[x] != nil && x != strings.ToUpper(x[:1])+x[1:]:
						// `call.Complete`, `server.Stop`: the prose's name for a method of
						// the package's own type (Call, Server) is taken too.
						if !ix.top[x][name] && !ix.hasMember(strings.ToUpper(x[:1])+x[1:], name, 0) {
							t.Errorf("%s: `%s`: package %s declares no %s", where, span, x, name)
						}
					case receivers[x] != "":
						if !ix.hasMember(receivers[x], name, 0) {
							t.Errorf("%s: `%s`: %s (a %s) has no method or field %s", where, span, x, receivers[x], name)
						}
					case ix.members[x] != nil:
						if !ix.hasMember(x, name, 0) {
							t.Errorf("%s: `%s`: type %s has no method or field %s", where, span, x, name)
						}
					}
				}
			}
		}
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestMessagesNameRealKeys: a message of the library (an error, a log line) that names a
// configuration-looking key (max-..., min-..., ...-timeout, -interval, -limit, -size, -cap,
// -budget) names one conf has: a newcomer greps conf/testdata/full.toml for it. Before,
// ErrPushBacklog named max-backlog (the key is maxbacklog).
func TestMessagesNameRealKeys(t *testing.T) {
	root := repoRoot(t)
	ix := buildIndex(t, root)
	keyish := regexp.MustCompile(`(?:^|[^a-z-])((?:max|min)(?:-[a-z]+)+|[a-z]+(?:-[a-z]+)*-(?:timeout|interval|limit|size|cap|budget))(?:$|[^a-z-])`)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "benchmarks", "interop", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			for _, m := range keyish.FindAllStringSubmatch(lit.Value, -1) {
				k := m[1]
				if !ix.keys[k] {
					rel, _ := filepath.Rel(root, fset.Position(lit.Pos()).Filename)
					t.Errorf("%s:%d: the message %s names %q, which is not a configuration key (conf/testdata/full.toml)",
						rel, fset.Position(lit.Pos()).Line, lit.Value, k)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
