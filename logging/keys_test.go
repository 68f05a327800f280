package logging_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// keys are the log keys the package doc lists; no other may be used.
var keys = map[string]bool{
	"servant": true, "func": true, "endpoint": true, "remote": true, "netthread": true,
	"error": true, "consecutive": true, "retry_in": true, "active": true, "path": true,
	"key": true, "value": true, "host": true, "port": true, "istcp": true, "state": true,
	"loops": true, "workers": true, "since_read": true, "since_ping": true, "since_moved": true,
	"panic": true, "stack": true, "ttl": true, "ret": true, "bytes": true, "sent": true,
	"conns": true, "calls": true, "request_id": true, "limit": true, "suppressed": true,
}

// TestKeys reads every non-test Go file of the repository, nested modules included, and checks
// that each zap field built with a literal key (zap.String("servant", …)) uses a key of the set.
func TestKeys(t *testing.T) {
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && n != "..") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok || len(c.Args) == 0 {
				return true
			}
			sel, ok := c.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "zap" {
				return true
			}
			lit, ok := c.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			key, _ := strconv.Unquote(lit.Value)
			seen++
			if !keys[key] {
				t.Errorf("%s: zap.%s(%q): not a key of the set (package logging's doc)", fset.Position(lit.Pos()), sel.Sel.Name, key)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 30 {
		t.Fatalf("found %d keyed zap fields in the repository, expected at least 30: is the walk reading it?", seen)
	}
}
