package greeter_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if the example leaves a goroutine behind (ants, gnet's
// dependency, starts two process-wide goroutines in its init).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreTopFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	)
}
