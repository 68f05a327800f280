package conf

import (
	"os"
	"testing"
)

// FuzzParse: whatever a configuration file says, Parse returns a Config or an error and never
// panics, and a Config it returns passes Validate again (Validate changes nothing it accepted).
func FuzzParse(f *testing.F) {
	full, err := os.ReadFile("testdata/full.toml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(full))
	f.Add("netthread = 2\nasyncthread = 0\n[servant.\"A.B.C\"]\nload-balance = \"p2c\"\n")
	f.Add("sync-invoke-timeout = \"1ns\"\nkeep-alive-interval = \"-1s\"\n[health]\ntimeout-ratio = 1e309\n")
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := Parse([]byte(src))
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("Parse returned a Config that Validate then refused: %v", err)
		}
	})
}
