package conf

import (
	"strings"
	"testing"
)

// TestKeysSpelledAsDocumented: a key written with other capitals than its documented spelling is
// refused, naming the spelling. The toml package matches keys to fields whatever their case, so
// such keys used to be taken, past the check that a duration has a unit: "Backup-Request =
// 5000000" was 5 ms, "Min-Frequent-Fail-Time = 3000" 3 µs. Map keys (servant names) keep their
// own spelling.
func TestKeysSpelledAsDocumented(t *testing.T) {
	for _, tt := range []struct{ toml, want string }{
		{"[servant.\"A.B.C\"]\nBackup-Request = 5000000\n", "backup-request"},
		{"[Health]\nmin-frequent-fail-time = \"3s\"\n", "health"},
		{"[health]\nMin-Frequent-Fail-Time = 3000\n", "min-frequent-fail-time"},
		{"Keep-Alive-Interval = \"30s\"\n", "keep-alive-interval"},
		{"NetThread = 4\n", "netthread"},
	} {
		_, err := Parse([]byte(tt.toml))
		if err == nil || !strings.Contains(err.Error(), "spelled as documented: "+tt.want) {
			t.Errorf("%q: err = %v, want the key's spelling %q named", tt.toml, err, tt.want)
		}
	}
	c, err := Parse([]byte("[servant.\"Hello.Server.GreeterObj\"]\nbackup-request = \"5ms\"\n"))
	if err != nil {
		t.Fatalf("a servant name with capitals: %v", err)
	}
	if got := c.Servants["Hello.Server.GreeterObj"].BackupRequest; got.String() != "5ms" {
		t.Fatalf("servant backup-request = %v, want 5ms", got)
	}
}
