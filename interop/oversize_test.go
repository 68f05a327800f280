package interop_test

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/interop/internal/tarsidl"
	"github.com/tarscomm/tarscomm/server"
)

// TestOversizeTarsGoReply: TarsGo v1.4.6's server answers Notes with ~4 KiB (600 seqs
// noted) to a tarscomm client whose max-packet-size is 1 KiB: that call fails ErrDecode naming
// the sizes, the reply is skipped, and the calls after it succeed on the same connection.
func TestOversizeTarsGoReply(t *testing.T) {
	s := sharedTarsGoServer(t)
	cfg := conf.Default()
	cfg.NetThread = 1
	cfg.MaxPacketSize = 1 << 10
	comm, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", comm.Close) })
	prx := echoProxy(t, comm, s)
	ctx := testCtx(t)
	const tag = "oversize"
	for i := range 600 {
		if _, err := prx.Note(ctx, &echopb.NoteReq{Tag: tag, Seq: 1<<40 + int64(i)}); err != nil {
			t.Fatalf("Note %d: %v", i, err)
		}
	}
	_, err = prx.Notes(ctx, &echopb.NotesReq{Tag: tag})
	if !errors.Is(err, communicator.ErrDecode) || !strings.Contains(err.Error(), "exceeds max-packet-size 1024") {
		t.Errorf("Notes answered with ~4 KiB to a client whose limit is 1 KiB: %v; want ErrDecode naming the sizes", err)
	}
	for i := range 3 {
		if _, err := prx.Echo(ctx, &echopb.EchoReq{Data: job.Payload(100, int64(10+i)), Seq: int64(10 + i)}); err != nil {
			t.Fatalf("Echo %d after: %v", i, err)
		}
	}
	for _, e := range comm.Stats().Endpoints {
		if e.ConnLosses != 0 || e.Reconnects != 0 {
			t.Errorf("endpoint %s: %d connections lost, %d reconnects; want none", e.Endpoint, e.ConnLosses, e.Reconnects)
		}
	}
}

// TestOversizeTarsGoRequest: TarsGo v1.4.6's client sends Echo of 2 MiB to a tarscomm
// server whose max-packet-size is 1 MiB: TarsGo gets -1 for it, and its other calls (before and
// after, on the same connection) succeed.
func TestOversizeTarsGoRequest(t *testing.T) {
	srv := server.New(server.WithWorkers(8), server.WithNumEventLoop(1), server.WithMaxPacketSize(1<<20),
		server.WithLogger(zaptest.NewLogger(t).Named("server")))
	if err := echopb.RegisterEcho(srv, tarscommPbObj, &echoServer{id: "small", notes: make(map[string][]int64)}); err != nil {
		t.Fatal(err)
	}
	port := serve(t, srv, "127.0.0.1:0", "tarscomm server")
	res := runTarsGoClient(t, job.Job{Proxy: tarscommPbObj + "@" + endpointString(port), Op: job.OpEcho,
		Sizes: []int{100, 2 << 20, 100, 3 << 20, 100}, TimeoutMs: 10000})
	for i, c := range res.Calls {
		big := c.Size > 1<<20
		switch {
		case big && (c.ErrCode != -1 || !strings.Contains(c.Err, "exceeds max-packet-size")):
			t.Errorf("call %d (%d bytes): err %q code %d; want -1 naming the limit", i, c.Size, c.Err, c.ErrCode)
		case !big && !c.OK:
			t.Errorf("call %d (%d bytes): err %q code %d; want it answered", i, c.Size, c.Err, c.ErrCode)
		}
	}
}

// TestOversizeTarsNodeRequest: TarsNode's client (@tars/rpc) sends echo of 2 MiB to a
// tarscomm server whose max-packet-size is 1 MiB: it is refused -1, and the echoes before and
// after it on the same connection are answered.
func TestOversizeTarsNodeRequest(t *testing.T) {
	srv := server.New(server.WithWorkers(8), server.WithMaxPacketSize(1<<20), server.WithLogger(zaptest.NewLogger(t).Named("server")))
	if err := tarsidl.Register(srv, tarscommTarsObj); err != nil {
		t.Fatal(err)
	}
	port := serve(t, srv, "127.0.0.1:0", "tarscomm server")
	res := runNodeClient(t, tarscommTarsObj+"@"+endpointString(port),
		nodeStep{"op": "echo", "size": 100},
		nodeStep{"op": "echo", "size": 2 << 20},
		nodeStep{"op": "echo", "size": 5},
	)
	called(t, "echo of 100 bytes", res[0], 0)
	refused(t, "echo of 2 MiB", res[1], codec.RetServerDecode)
	called(t, "echo after the refused one", res[2], 0)
}
