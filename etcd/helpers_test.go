package etcd_test

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/endpoint"
	"github.com/tarscomm/tarscomm/etcd"
	"github.com/tarscomm/tarscomm/examples/hello/hellopb"
	"github.com/tarscomm/tarscomm/servantproxy"
	"github.com/tarscomm/tarscomm/server"
)

const (
	servant = "Test.Server.GreeterObj"
	prefix  = "/tarscomm-test"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// etcdServer is an embedded etcd member on loopback.
type etcdServer struct {
	dir          string
	client, peer int
	e            *embed.Etcd
}

// startEtcd starts an embedded single-member etcd on 127.0.0.1 with free ports and a temp dir;
// t.Cleanup stops it.
func startEtcd(t *testing.T) *etcdServer {
	t.Helper()
	s := &etcdServer{dir: t.TempDir(), client: freePort(t), peer: freePort(t)}
	s.start(t)
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *etcdServer) start(t *testing.T) {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = s.dir
	cfg.Name = "test"
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", s.client))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", s.peer))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.LogLevel = "error"
	cfg.ListenMetricsUrls = nil
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(20 * time.Second):
		e.Close()
		t.Fatal("etcd did not become ready within 20s")
	}
	s.e = e
}

func (s *etcdServer) stop() {
	if s.e != nil {
		s.e.Close()
		s.e = nil
	}
}

func (s *etcdServer) endpoint() string { return fmt.Sprintf("127.0.0.1:%d", s.client) }

// newClient returns an etcd client of s; t.Cleanup closes it.
func newClient(t *testing.T, s *etcdServer) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{s.endpoint()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// greeter is a project server answering SayHello with "<name>@<id>".
type greeter struct {
	id   string
	srv  *server.Server
	addr string
}

func (g *greeter) endpoint() string {
	host, port, _ := net.SplitHostPort(g.addr)
	return fmt.Sprintf("tcp -h %s -p %s", host, port)
}

func startGreeter(t *testing.T, id string) *greeter {
	t.Helper()
	s := server.New(server.WithLogger(zaptest.NewLogger(t).Named("server-"+id)), server.WithNumEventLoop(1))
	err := server.HandleProto(s, servant, "SayHello", func(_ context.Context, _ *server.Current, req *hellopb.HelloRequest) (*hellopb.HelloReply, error) {
		return &hellopb.HelloReply{Message: req.GetName() + "@" + id, Seq: req.GetSeq()}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &greeter{id: id, srv: s, addr: a.String()}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	return g
}

// sayHello makes one call and returns the id of the server that answered it.
func sayHello(ctx context.Context, sp *servantproxy.ServantProxy, name string, seq uint64) (string, error) {
	rsp := new(hellopb.HelloReply)
	if err := sp.Invoke(ctx, "SayHello", &hellopb.HelloRequest{Name: name, Seq: seq}, rsp); err != nil {
		return "", err
	}
	msg := rsp.GetMessage()
	if rsp.GetSeq() != seq || !strings.HasPrefix(msg, name+"@") {
		return "", fmt.Errorf("reply {%q, %d} does not answer request {%q, %d}", msg, rsp.GetSeq(), name, seq)
	}
	return strings.TrimPrefix(msg, name+"@"), nil
}

// loopbackEndpoint is servant's endpoint tcp 127.0.0.1:port.
func loopbackEndpoint(port int) endpoint.Endpoint {
	return endpoint.Endpoint{Proto: endpoint.TCP, Host: "127.0.0.1", Port: port, Weight: -1}
}

// loopbackKey is the key that registers loopbackEndpoint(port) under prefix.
func loopbackKey(port int) string { return etcd.Key(prefix, servant, loopbackEndpoint(port)) }

// putLoopback registers loopbackEndpoint(port) with c, within 5 s.
func putLoopback(t *testing.T, c *clientv3.Client, port int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, loopbackKey(port), loopbackEndpoint(port).String()); err != nil {
		t.Fatal(err)
	}
}
