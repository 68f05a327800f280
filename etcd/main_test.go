package etcd_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind. The first two ignored
// functions are the process-wide goroutines that gnet's dependency ants starts in its package
// init. No goroutine of etcd is ignored: every test stops its embedded etcd server and closes
// its clients in t.Cleanup, and the embedded server's and client's goroutines end with them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}
