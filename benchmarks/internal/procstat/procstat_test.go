package procstat

import (
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	line := "1234 (my (odd) prog) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 4 0 100 0 0\n"
	got, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := 325 * 10 * time.Millisecond; got != want {
		t.Fatalf("parseStat = %v, want %v", got, want)
	}
	if _, err := parseStat("1234 (x) S 1"); err == nil {
		t.Fatal("parseStat of a short line succeeded")
	}
}

func TestReadsThisMachine(t *testing.T) {
	self, err := SelfCPU()
	if err != nil || self <= 0 {
		t.Fatalf("SelfCPU = %v, %v; want > 0", self, err)
	}
	if _, err := ProcessCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAvg(); err != nil {
		t.Fatal(err)
	}
}
