package future

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test or an example leaves a goroutine behind (the examples
// start a server and a Communicator). The two ignored functions are the process-wide goroutines
// that gnet's dependency ants starts in its package init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}
