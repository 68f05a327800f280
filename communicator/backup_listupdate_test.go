package communicator_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/server"
)

// heldBkServer answers SayHello with "<name>@<id>"; calls named "bk" are counted and held until
// release is closed (or the server stops).
type heldBkServer struct {
	id      string
	addr    string
	port    int
	bk      atomic.Int64
	release chan struct{}
	rel     func()
}

func startHeldBkServer(t *testing.T, id string) *heldBkServer {
	t.Helper()
	endToEnd(t)
	rs := &heldBkServer{id: id, release: make(chan struct{})}
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)), server.WithNumEventLoop(1), server.WithWorkers(16))
	err := server.HandleProto(s, servant, "SayHello", func(ctx context.Context, cur *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		if req.GetName() == "bk" && ownCaller(cur) {
			rs.bk.Add(1)
			stop, done := stopped(ctx, false)
			defer done()
			select {
			case <-rs.release:
			case <-stop:
				return nil, ctx.Err()
			}
		}
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs.addr = a.String()
	_, p, _ := net.SplitHostPort(rs.addr)
	rs.port, _ = strconv.Atoi(p)
	var once sync.Once
	rs.rel = func() { once.Do(func() { close(rs.release) }) }
	t.Cleanup(func() {
		rs.rel()
		_ = stopServer(t, "server "+id, s)
	})
	return rs
}

func (rs *heldBkServer) endpoint() string { return "tcp -h 127.0.0.1 -p " + strconv.Itoa(rs.port) }

// TestBackupAfterListUpdate: a backup request goes to another endpoint than its first call's,
// even when the list changed between the two (objectproxy.Backup's contract). Backup remembered
// the list index its first call went to; an endpoint joining before it in list order moved the
// index, and the backup avoided the newcomer and went to the endpoint the first call was stuck on.
func TestBackupAfterListUpdate(t *testing.T) {
	s1, s2 := startHeldBkServer(t, "s1"), startHeldBkServer(t, "s2")
	// first: the endpoint the first call goes to; other: the one that joins, sorting before it
	// in TarsCpp order ("1:127.0.0.1:<port>" as strings), so that the first's index moves.
	first, other := s1, s2
	if "1:127.0.0.1:"+strconv.Itoa(s1.port) < "1:127.0.0.1:"+strconv.Itoa(s2.port) {
		first, other = s2, s1
	}
	path := filepath.Join(t.TempDir(), "naming.txt")
	write := func(ss ...*heldBkServer) {
		data := ""
		for _, s := range ss {
			data += servant + "@" + s.endpoint() + "\n"
		}
		if err := os.WriteFile(path+".tmp", []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	write(first)
	const delay = 4 * time.Second
	comm := newComm(t, func(c *conf.Config) {
		livenessTimeouts(c)
		c.NetThread = 1
		c.NamingFile = path
		c.Servants = map[string]conf.Servant{servant: {LoadBalance: "roundrobin", BackupRequest: delay, BackupBudget: 1, Idempotent: []string{"SayHello"}}}
	})
	sp, err := comm.Proxy(servant)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if from, err := sayHello(ctx, sp, "warm", 1); err != nil || from != first.id {
		t.Fatalf("warm-up: from %q, err %v", from, err)
	}

	var wg sync.WaitGroup
	wg.Go(func() { _, _ = sayHello(ctx, sp, "bk", 2) })
	start := time.Now()
	waitFor(t, "the first call reaches its endpoint", func() bool { return first.bk.Load() == 1 })

	// The list changes while the first call waits: other joins, before first in list order.
	write(first, other)
	waitFor(t, "a call reaches the endpoint that joined", func() bool {
		from, err := sayHello(ctx, sp, "probe", 3)
		return err == nil && from == other.id
	})
	if sp.BackupStats().Sent != 0 || time.Since(start) >= delay {
		t.Skip("inconclusive: the backup went before the list update was seen (a very slow machine)")
	}
	waitFor(t, "the backup is sent and reaches a server", func() bool {
		return sp.BackupStats().Sent == 1 && first.bk.Load()+other.bk.Load() == 2
	})
	gotFirst, gotOther := first.bk.Load(), other.bk.Load()
	first.rel()
	other.rel()
	waitDone(t, &wg, "the call")
	if gotOther != 1 {
		t.Fatalf("the backup went to the endpoint the first call is stuck on (%s got the request %d times, %s %d times), though %s is listed and healthy",
			first.id, gotFirst, other.id, gotOther, other.id)
	}
}
