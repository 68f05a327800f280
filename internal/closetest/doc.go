// Package closetest bounds a test's Close: a Communicator's Close (or a server's Stop, or any
// close) that has not returned within Limit fails the test at once with every goroutine's
// stack, so a hang is a failure that says where, never a wait for the test binary's timeout.
// It is for tests only: of any package of the module (communicator's end-to-end suite closes
// through it too: closeWithin, closeComm, stopServer) and of the nested modules (etcd, otel,
// prometheus, interop), whose paths are inside this module's tree.
package closetest
