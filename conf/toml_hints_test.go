package conf

import (
	"strings"
	"testing"
)

// TestTOMLMistakesSayWhatToWrite: the two TOML mistakes a newcomer copying the README makes most
// are refused with an error that shows what to write. Before (found by a review following the
// docs into a new module):
//
//   - a servant table with the servant's name unquoted, [servant.Hello.GreeterServer.GreeterObj]
//     (TOML reads the dots as nesting), got one "conf: unknown key ..." line per key under it,
//     none saying that the name needs quotes;
//   - the adapter table written with single brackets, [server.adapter] (the README shows
//     [[server.adapter]]), got the decoder's words: "incompatible types: TOML value has type
//     map[string]any; destination has type slice".
func TestTOMLMistakesSayWhatToWrite(t *testing.T) {
	for _, tt := range []struct{ name, toml, want string }{
		{"unquoted servant name", "[servant.Hello.GreeterServer.GreeterObj]\nsync-invoke-timeout = \"1s\"\nretries = 1\n",
			`[servant."Hello.GreeterServer.GreeterObj"]`},
		{"single-bracket adapter", "[server]\nnetthread = 1\n[server.adapter]\nservant = \"A.B.C\"\nendpoint = \"tcp -h 127.0.0.1 -p 18015\"\n",
			"[[server.adapter]]"},
	} {
		_, err := Parse([]byte(tt.toml))
		if err == nil {
			t.Errorf("%s: accepted", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %q; want it to show what to write: %s", tt.name, err, tt.want)
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s: %d error lines for one mistake:\n%v", tt.name, n, err)
		}
		t.Logf("%s: %v", tt.name, err)
	}
	// A misspelled key under a servant whose name is quoted, or has no dots, is not a name to
	// quote.
	for _, doc := range []string{"[servant.\"A.B.C\"]\nretires = 1\n", "[servant.Greeter]\nretires = 1\n"} {
		if _, err := Parse([]byte(doc)); err == nil || strings.Contains(err.Error(), "quote it") {
			t.Errorf("%q: err = %v, want an unknown key without a hint to quote", doc, err)
		}
	}
}
