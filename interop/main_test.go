package interop_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// bins holds the TarsGo programs TestMain builds for the tests.
var bins struct {
	server, client string
}

// TestMain builds the TarsGo server and client, runs the tests, stops the shared TarsGo
// server, and fails if a test left a goroutine of tarscomm behind (ants, gnet's dependency,
// starts two process-wide goroutines in its init).
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tarscomm-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	tarsNode.dir = filepath.Join(dir, "tarsnode") // installed by the first TarsNode test
	bins.server = filepath.Join(dir, "tarsgo-server")
	bins.client = filepath.Join(dir, "tarsgo-client")
	for _, b := range []struct{ out, pkg string }{
		{bins.server, "./cmd/tarsgo-server"},
		{bins.client, "./cmd/tarsgo-client"},
	} {
		// Without -race: TarsGo itself has data races, and they are not ours to report.
		cmd := exec.Command(goTool(), "build", "-o", b.out, b.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.pkg, err, out)
			return 1
		}
	}
	code := m.Run()
	stopShared(code != 0)
	if code == 0 {
		if err := goleak.Find(
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
			goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}

// goTool returns the go command that runs these tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go" // not found: exec reports it
}
