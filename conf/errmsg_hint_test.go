package conf

import (
	"strings"
	"testing"
)

// TestErrorsSayWhatToWrite: the first configuration mistakes a newcomer makes get an error
// that says what to write instead, as the bare-number and unquoted-servant errors already do.
// Before, a misspelled key got "unknown key" alone and a quoted "3000" the toml package's
// `invalid duration: "3000"` (found by the newcomer review).
//
//   - a key one letter off a real one names the real one (TarsCpp's keys are long and hyphenated:
//     sync-invoke-timout, retry for retries, asynctread);
//   - a duration quoted without a unit ("3000", TARS's milliseconds) gets the same hint as the
//     bare number 3000 does, not the toml package's bare `invalid duration: "3000"`.
func TestErrorsSayWhatToWrite(t *testing.T) {
	for _, tt := range []struct{ toml, want, not string }{
		{"sync-invoke-timout = \"3s\"\n", "sync-invoke-timeout", ""},
		{"asynctread = 3\n", "asyncthread", ""},
		{"[servant.\"A.B.C\"]\nretry = 1\n", "retries", ""},
		{"sync-invoke-timeout = \"3000\"\n", "1500ms", ""},
		{"[health]\ntry-intervall = \"3s\"\n", "try-interval", ""},
		{"zzzz = 1\n", "unknown key zzzz", "did you mean"}, // nothing near: no guess
	} {
		_, err := Parse([]byte(tt.toml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v; want it to say %q", tt.toml, err, tt.want)
		} else if tt.not != "" && strings.Contains(err.Error(), tt.not) {
			t.Errorf("%q: err = %v; want it not to say %q", tt.toml, err, tt.not)
		}
	}
}
