package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/tarscomm/tarscomm/communicator"
	"github.com/tarscomm/tarscomm/conf"
	"github.com/tarscomm/tarscomm/internal/closetest"
	"github.com/tarscomm/tarscomm/internal/tlstest"
	"github.com/tarscomm/tarscomm/interop/echopb"
	"github.com/tarscomm/tarscomm/interop/internal/job"
	"github.com/tarscomm/tarscomm/server"
	"github.com/tarscomm/tarscomm/tlsconn"
)

// TLS interop: TarsGo v1.4.6 configures TLS from its configuration file (ca, cert, key,
// verifyclient in <server>; ca, cert, key in <client>) and speaks Go's crypto/tls; the tests
// below run its real server and client processes against tarscomm's, both ways, with mutual TLS.

// tlsPKI is a CA, a server certificate for 127.0.0.1 and a client certificate.
type tlsPKI struct {
	ca           *tlstest.CA
	server, user tlstest.Pair
}

func newPKI(t *testing.T) *tlsPKI {
	ca := tlstest.NewCA(t, "interop-ca")
	return &tlsPKI{ca: ca, server: ca.Issue(t, tlstest.Leaf{Name: "server"}), user: ca.Issue(t, tlstest.Leaf{Name: "user", Client: true})}
}

func sslEndpointString(port int) string { return fmt.Sprintf("ssl -h 127.0.0.1 -p %d -t 60000", port) }

// startTLSTarscommServer is startTarscommServer with TLS requiring client certificates.
func startTLSTarscommServer(t *testing.T, p *tlsPKI) int {
	t.Helper()
	cfg, err := tlsconn.ServerConfig(tlsconn.Files{CA: p.ca.File, Cert: p.server.Cert, Key: p.server.Key}, true)
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.WithWorkers(8), server.WithNumEventLoop(2), server.WithTLS(cfg),
		server.WithLogger(zaptest.NewLogger(t).Named("tls-server")))
	if err := echopb.RegisterEcho(s, tarscommPbObj, &echoServer{id: "tls", notes: make(map[string][]int64)}); err != nil {
		t.Fatal(err)
	}
	return serve(t, s, "127.0.0.1:0", "TLS server")
}

// runTLSTarsGoClient runs job j in a cmd/tarsgo-client process whose TarsGo configuration
// (-config) holds the client TLS settings clientXML.
func runTLSTarsGoClient(t *testing.T, j job.Job, clientXML string) *job.Result {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "client.conf")
	cfg := "<tars>\n<application>\n<server>\napp=Interop\nserver=TarsGoTLSClient\nlogLevel=ERROR\n</server>\n<client>\n" + clientXML + "</client>\n</application>\n</tars>\n"
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.client, "-config", path) // TarsGo reads -config itself
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tarsgo-client %s: %v\n%s", j.Op, err, stderr.String())
	}
	var res job.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("tarsgo-client %s: bad result %q: %v\n%s", j.Op, stdout.String(), err, stderr.String())
	}
	return &res
}

// TestTLSTarsGoClient: TarsGo's client with ca, cert and key calls tarscomm's mutual-TLS server
// (bodies from 0 B to 1 MiB, 8 goroutines); without a client certificate its calls fail and
// reach no handler.
func TestTLSTarsGoClient(t *testing.T) {
	p := newPKI(t)
	port := startTLSTarscommServer(t, p)
	proxy := tarscommPbObj + "@" + sslEndpointString(port)
	withCert := fmt.Sprintf("ca=%s\ncert=%s\nkey=%s\n", p.ca.File, p.user.Cert, p.user.Key)
	res := runTLSTarsGoClient(t, job.Job{Proxy: proxy, Op: job.OpEcho, Sizes: []int{0, 1, 1000, 64 << 10, 1 << 20}, Parallel: 8}, withCert)
	if len(res.Calls) != 40 {
		t.Fatalf("%d calls reported, want 40", len(res.Calls))
	}
	mustOK(t, res)

	res = runTLSTarsGoClient(t, job.Job{Proxy: proxy, Op: job.OpEcho, Sizes: []int{10}, TimeoutMs: 1000}, "ca="+p.ca.File+"\n")
	if len(res.Calls) != 1 || res.Calls[0].OK || res.Calls[0].Err == "" {
		t.Fatalf("TarsGo client without a certificate: %+v, want its call to fail", res.Calls)
	}
	t.Logf("TarsGo without a client certificate: %s", res.Calls[0].Err)
}

const tarsgoTLSConfig = `<tars>
  <application>
    <server>
      app=Interop
      server=TarsGoServer
      logLevel=ERROR
      ca=%s
      cert=%s
      key=%s
      verifyclient=1
      <Interop.TarsGoServer.EchoPbObjAdapter>
        endpoint=ssl -h 127.0.0.1 -p %d -t 60000
        servant=Interop.TarsGoServer.EchoPbObj
      </Interop.TarsGoServer.EchoPbObjAdapter>
      <Interop.TarsGoServer.EchoTarsObjAdapter>
        endpoint=tcp -h 127.0.0.1 -p %d -t 60000
        servant=Interop.TarsGoServer.EchoTarsObj
      </Interop.TarsGoServer.EchoTarsObjAdapter>
    </server>
  </application>
</tars>
`

// startTLSTarsGoServer runs cmd/tarsgo-server with its protobuf servant on an ssl endpoint
// requiring client certificates; it returns that port.
func startTLSTarsGoServer(t *testing.T, p *tlsPKI) int {
	t.Helper()
	pb, err1 := freePort()
	tp, err2 := freePort()
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "server.conf")
	if err := os.WriteFile(path, fmt.Appendf(nil, tarsgoTLSConfig, p.ca.File, p.server.Cert, p.server.Key, pb, tp), 0o644); err != nil {
		t.Fatal(err)
	}
	out := new(lockedBuffer)
	cmd := exec.Command(bins.server, "-config", path, "-id", "tls")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("TarsGo TLS server output:\n%s", out.String())
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(pb), 100*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return pb
		}
		select {
		case <-exited:
			t.Fatalf("TarsGo TLS server exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("TarsGo TLS server does not listen: %s", out.String())
		}
	}
}

// tlsComm is a Communicator with the TLS keys of toml; it skips the test while this build
// does not know them or refuses ssl endpoints.
func tlsComm(t *testing.T, toml string) *communicator.Communicator {
	t.Helper()
	cfg, err := conf.Parse([]byte(toml))
	if err != nil {
		if strings.Contains(err.Error(), "unknown key") {
			t.Fatalf("conf does not have the TLS keys yet: %v", err)
		}
		t.Fatal(err)
	}
	c, err := communicator.New(cfg, communicator.WithLogger(zaptest.NewLogger(t).Named("comm")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closetest.Within(t, "Communicator.Close", c.Close) })
	return c
}

func tlsEchoProxy(t *testing.T, c *communicator.Communicator, port int) *echopb.EchoProxy {
	t.Helper()
	prx := new(echopb.EchoProxy)
	if err := c.StringToProxy(tarsgoPbObj+"@"+sslEndpointString(port), prx); err != nil {
		if strings.Contains(err.Error(), "only tcp is supported") {
			t.Fatalf("the communicator refuses ssl endpoints: %v", err)
		}
		t.Fatal(err)
	}
	return prx
}

// TestTLSTarsGoServer: tarscomm's client with ca, cert and key calls TarsGo's server on an ssl
// endpoint with verifyclient=1, sync and async, bodies from 0 B to 1 MiB; without a client
// certificate the call fails with ErrTLS, naming the endpoint.
func TestTLSTarsGoServer(t *testing.T) {
	p := newPKI(t)
	port := startTLSTarsGoServer(t, p)
	ctx := testCtx(t)
	good := tlsComm(t, fmt.Sprintf("ca = %q\ncert = %q\nkey = %q\n", p.ca.File, p.user.Cert, p.user.Key))
	prx := tlsEchoProxy(t, good, port)
	for i, n := range []int{0, 1, 1000, 64 << 10, 1 << 20} {
		data := job.Payload(n, int64(i))
		rsp, err := prx.Echo(ctx, &echopb.EchoReq{Data: data, Seq: int64(i)})
		if err != nil {
			t.Fatalf("Echo of %d bytes over TLS: %v", n, err)
		}
		if rsp.GetSeq() != int64(i) || !bytes.Equal(rsp.GetData(), data) {
			t.Fatalf("Echo of %d bytes: got seq %d and %d bytes back", n, rsp.GetSeq(), len(rsp.GetData()))
		}
		done := make(chan error, 1)
		if err := prx.AsyncEcho(ctx, &echopb.EchoReq{Data: data, Seq: int64(i)}, func(rsp *echopb.EchoRsp, err error) {
			if err == nil && !bytes.Equal(rsp.GetData(), data) {
				err = errors.New("wrong reply")
			}
			done <- err
		}); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("AsyncEcho of %d bytes over TLS: %v", n, err)
		}
	}

	bad := tlsComm(t, fmt.Sprintf("ca = %q\nconnect-timeout = \"1s\"\n", p.ca.File))
	_, err := tlsEchoProxy(t, bad, port).Echo(ctx, &echopb.EchoReq{Seq: 1})
	t.Logf("tarscomm without a client certificate: %v", err)
	if !errors.Is(err, tlsconn.ErrTLS) || !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
		t.Fatalf("without a client certificate: %v, want ErrTLS naming the endpoint", err)
	}
}
