package dns_test

import (
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/dns"
)

// dropProxy is a UDP DNS forwarder on loopback in front of a responder that does not answer the
// questions about one name while drop is set: that name's resolver "does not answer within the
// timeout".
type dropProxy struct {
	conn *net.UDPConn
	to   string
	drop atomic.Value // string: the name whose questions get no answer ("" none)
	wg   sync.WaitGroup
}

func startDropProxy(t *testing.T, to string) *dropProxy {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p := &dropProxy{conn: c, to: to}
	p.drop.Store("")
	p.wg.Go(p.serve)
	t.Cleanup(func() { _ = c.Close(); p.wg.Wait() })
	return p
}

func (p *dropProxy) addr() string { return p.conn.LocalAddr().String() }

func (p *dropProxy) serve() {
	for {
		buf := make([]byte, 1500)
		n, from, err := p.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		q := buf[:n]
		if len(q) < 12 {
			continue
		}
		if name, _, ok := readName(q, 12); ok && key(name) == p.drop.Load().(string) {
			continue // no answer
		}
		p.wg.Go(func() {
			up, err := net.Dial("udp", p.to)
			if err != nil {
				return
			}
			defer up.Close()
			_ = up.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := up.Write(q); err != nil {
				return
			}
			rb := make([]byte, 1500)
			m, err := up.Read(rb)
			if err != nil {
				return
			}
			_, _ = p.conn.WriteToUDP(rb[:m], from)
		})
	}
}

// TestSRVTargetTimeoutKeepsEndpoint: an SRV name lists two targets; then the resolver stops
// answering for one of them (a lost packet, an overloaded DNS server). As the package doc
// promises, that changes nothing: the last list stays in force, and an endpoint leaves only when
// a resolution succeeds without it. resolve used to keep the targets that resolved and only log
// the others, so a healthy server left every client's list because one lookup timed out. (Its
// lookups, which Go's resolver runs on goroutines that outlive the Source, now end within the
// resolution's Timeout: goleak checks none is left.)
func TestSRVTargetTimeoutKeepsEndpoint(t *testing.T) {
	rs := startResponder(t)
	rs.setSRV("_tars._tcp.g.test",
		srvRecord{priority: 10, weight: 0, port: 9001, target: "a.g.test"},
		srvRecord{priority: 10, weight: 0, port: 9002, target: "b.g.test"},
	)
	rs.setA("a.g.test", "127.0.0.1")
	rs.setA("b.g.test", "127.0.0.2")
	px := startDropProxy(t, rs.addr())
	src, err := dns.NewSRV("_tars._tcp.g.test", dns.Options{Resolver: px.addr(), Interval: 50 * time.Millisecond, Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	stop := src.WatchReporting(naming.Query{Object: "A.B.C"}, rec.push, rec.fail)
	defer stop()
	rec.waitFor(t, "both targets", lastIs("127.0.0.1:9001", "127.0.0.2:9002"))

	px.drop.Store("b.g.test") // b's lookups now time out
	// Three seconds of b timing out: several resolutions (every 50ms, each within 500ms).
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		ls, fails := rec.snapshot()
		for _, l := range ls {
			if !slices.Equal(addrs(l), []string{"127.0.0.1:9001", "127.0.0.2:9002"}) {
				t.Fatalf("while b.g.test's lookups timed out, the watch was pushed %v (failures reported: %d): "+
					"b's endpoint left the list though no resolution succeeded without it", addrs(l), len(fails))
			}
		}
	}
}
