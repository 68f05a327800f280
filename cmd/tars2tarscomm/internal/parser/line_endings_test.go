package parser

import (
	"strings"
	"testing"
)

// Lines may end in \r alone (files saved by classic Mac OS editors) as well as \n and \r\n: a //
// comment ends at the line's end, and errors count lines alike. Before, a file whose lines
// ended in \r alone had its first // comment swallow the rest of it, and the error read
// "missing '}'" at the wrong line (a review of the generator).
func TestLineEndings(t *testing.T) {
	lines := []string{
		"// App's types",
		"module App {",
		"\tstruct S { 0 optional int x; }; // a comment",
		"\tstruct T { 0 optional S s; };",
		"};",
	}
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		p, err := LoadSource("/x/app.tars", strings.Join(lines, eol), nil)
		if err != nil {
			t.Fatalf("lines ended by %q: %v", eol, err)
		}
		if ms := p.Modules["App"]; len(ms) != 1 || len(ms[0].Structs) != 2 {
			t.Fatalf("lines ended by %q: module App read as %+v, want one block with S and T", eol, ms)
		}
		bad := strings.Join(append(append([]string{}, lines[:3]...), "\tstruct U { 0 optional Nope n; };", "};"), eol)
		_, err = LoadSource("/x/app.tars", bad, nil)
		if err == nil || !strings.Contains(err.Error(), "app.tars:4:") {
			t.Fatalf("lines ended by %q, an unknown type on line 4: error %v, want one at app.tars:4", eol, err)
		}
	}
}
