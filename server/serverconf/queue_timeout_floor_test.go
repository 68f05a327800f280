package serverconf_test

import (
	"context"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/server/serverconf"
)

// TestQueueTimeoutFloor: TarsCpp reads an adapter's <queuetimeout> through
// TC_EpollServer::BindAdapter::setQueueTimeout, which raises any value below MIN_QUEUE_TIMEOUT
// (3000 ms) to 3000 ms. With queuetimeout = 1000 a request that waited 2 s for the adapter's one
// handler thread (its client's own timeout is 60 s) is therefore still run by a TarsCpp server,
// and by this one now. Before, this server answered it -6 (server queue timeout) without running
// it.
func TestQueueTimeoutFloor(t *testing.T) {
	entered := make(chan string, 4)
	release := make(chan struct{})
	srvs := start(t, `
[[server.adapter]]
servant = "App.S.FloorObj"
endpoint = "tcp -h 127.0.0.1 -p 0"
threads = 1
queuetimeout = 1000
`, func(s *serverconf.Servers) {
		if err := s.Server("App.S.FloorObj").Handle("App.S.FloorObj", "block", func(_ context.Context, _ *server.Current, req []byte, _ []byte) ([]byte, error) {
			entered <- string(req)
			if string(req) == "first" {
				<-release
			}
			return nil, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	c := dialRaw(t, srvs, "App.S.FloorObj")
	var frames []byte
	for i, body := range []string{"first", "second"} {
		frames = codec.AppendRequest(frames, &codec.RequestPacket{Version: codec.VersionTars, RequestID: int32(i + 1),
			ServantName: "App.S.FloorObj", FuncName: "block", Buffer: []byte(body), Timeout: 60000})
	}
	if _, err := c.c.Write(frames); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-entered:
		if got != "first" {
			t.Fatalf("handler entered with %q", got)
		}
	case <-time.After(closeLimit):
		t.Fatal("the first request's handler did not run")
	}
	time.Sleep(2 * time.Second) // the second waits 2 s: above 1000 ms, below TarsCpp's floor of 3000 ms
	close(release)
	for _, want := range []int32{1, 2} {
		f, err := c.next()
		if err != nil {
			t.Fatal(err)
		}
		var rsp codec.ResponsePacket
		if err := codec.DecodeResponse(f, &rsp); err != nil {
			t.Fatal(err)
		}
		if rsp.RequestID != want || rsp.Ret != codec.RetOK {
			t.Errorf("reply id %d: ret %d (%q), want id %d ret 0: queuetimeout = 1000 is 3000 ms for TarsCpp "+
				"(setQueueTimeout's MIN_QUEUE_TIMEOUT), and the request waited 2 s", rsp.RequestID, rsp.Ret, rsp.ResultDesc, want)
		}
	}
}
