package communicator_test

import (
	"fmt"
	"testing"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/servantproxy"
)

// panicOf runs f and returns what it panicked with, as text ("" if it did not).
func panicOf(f func()) (p string) {
	defer func() {
		if r := recover(); r != nil {
			p = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// TestNewNilOption: a nil Option passed to New (an option chosen at run time and left unset) is
// skipped, as the library skips a nil CallOption, interceptor or push function. Before (found by
// the misuse review), New panicked with a nil pointer dereference.
func TestNewNilOption(t *testing.T) {
	endToEnd(t)
	var c *communicator.Communicator
	var err error
	if p := panicOf(func() { c, err = communicator.New(conf.Default(), nil) }); p != "" {
		t.Fatalf("communicator.New(cfg, nil Option) panicked: %s; want the nil option skipped (or an error)", p)
	}
	if err == nil {
		_ = closeComm(t, c)
	}
}

// TestZeroCommunicator: a Communicator not made by New (its zero value) makes no proxy, with an
// error saying so, and its Close returns nil. Before (found by the misuse review), StringToProxy
// with endpoints panicked ("assignment to entry in nil map") and Close with a nil pointer
// dereference.
func TestZeroCommunicator(t *testing.T) {
	var c communicator.Communicator
	var sp servantproxy.ServantProxy
	var err error
	if p := panicOf(func() { err = c.StringToProxy(servant+"@tcp -h 127.0.0.1 -p 1", &sp) }); p != "" {
		t.Errorf("StringToProxy on a zero Communicator panicked: %s; want an error saying it was not made by New", p)
	} else if err == nil {
		t.Errorf("StringToProxy on a zero Communicator bound a proxy; want an error saying it was not made by New")
	}
	if p := panicOf(func() { err = c.Close() }); p != "" {
		t.Errorf("Close on a zero Communicator panicked: %s; want nil or an error saying it was not made by New", p)
	}
}
