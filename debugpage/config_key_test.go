package debugpage

import "testing"

// TestSettingsQuoteServantNames: a servant's name has dots, and the page shows its settings under
// the key a configuration file writes, quoted (servant."A.B.C".retries). Before, the page showed
// servant.A.B.C.retries, which reads as a key four tables deep and is not what the file says.
func TestSettingsQuoteServantNames(t *testing.T) {
	type servant struct {
		Retries int `toml:"retries"`
	}
	cfg := struct {
		Servant map[string]servant `toml:"servant"`
	}{Servant: map[string]servant{"Hello.Server.GreeterObj": {Retries: 2}, "plain-name": {Retries: 1}}}
	got := settings(cfg)
	want := []Setting{{`servant."Hello.Server.GreeterObj".retries`, "2"}, {"servant.plain-name.retries", "1"}}
	if len(got) != len(want) {
		t.Fatalf("settings = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("settings = %v, want %v", got, want)
		}
	}
}
