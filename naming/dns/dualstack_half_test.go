package dns_test

import (
	"encoding/binary"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/naming"
	"github.com/tarscomm/tarscomm/naming/dns"
)

// qtypeFailProxy is a UDP DNS forwarder on loopback in front of a responder that answers the
// questions of one type (A, say) about one name with SERVFAIL while name is set, and forwards
// every other question: a resolver that, for a while, cannot answer half of a dual-stack lookup
// (its upstream timed out, a DNSSEC validation failed, it is overloaded).
type qtypeFailProxy struct {
	conn   *net.UDPConn
	to     string
	name   atomic.Value // string: the name whose questions of type qtype get SERVFAIL ("" none)
	qtype  uint16
	failed atomic.Int64 // questions answered SERVFAIL
	wg     sync.WaitGroup
}

func startQtypeFailProxy(t *testing.T, to string, qtype uint16) *qtypeFailProxy {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	p := &qtypeFailProxy{conn: c, to: to, qtype: qtype}
	p.name.Store("")
	p.wg.Go(p.serve)
	t.Cleanup(func() { _ = c.Close(); p.wg.Wait() })
	return p
}

func (p *qtypeFailProxy) addr() string { return p.conn.LocalAddr().String() }

func (p *qtypeFailProxy) serve() {
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
		if name, end, ok := readName(q, 12); ok && end+4 <= len(q) &&
			key(name) == p.name.Load().(string) && binary.BigEndian.Uint16(q[end:]) == p.qtype {
			p.failed.Add(1)
			_, _ = p.conn.WriteToUDP(servfail(q, end+4), from)
			continue
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

// servfail is the SERVFAIL response to the query q, whose question ends at qend.
func servfail(q []byte, qend int) []byte {
	out := append([]byte(nil), q[0:2]...)                                  // the id
	flags := uint16(0x8000|0x0080) | binary.BigEndian.Uint16(q[2:])&0x0100 // QR, RA, RD as asked
	out = binary.BigEndian.AppendUint16(out, flags|2)                      // rcode 2: SERVFAIL
	out = binary.BigEndian.AppendUint16(out, 1)
	out = append(out, 0, 0, 0, 0, 0, 0)
	return append(out, q[12:qend]...)
}

// TestDualStackHalfAnswerKeepsList: a dual-stack name resolves to an IPv4 and an
// IPv6 address; then the resolver fails its A questions (SERVFAIL) while it still answers its
// AAAA ones. The package doc promises that a resolution that fails changes nothing, "so an
// endpoint disappears only when a resolution succeeds without it". But the Source's resolver was
// Go's with StrictErrors off: Go then returned the AAAA half alone as a success, and the Source
// pushed a list without the IPv4 endpoint: every client dropped its healthy IPv4 servers because
// its resolver failed one question. Now StrictErrors is on. (Go's doc of StrictErrors: it makes temporary errors,
// "including timeout, socket errors, and SERVFAIL", abort an A+AAAA lookup "instead of returning
// a partial result"; Go's code: it "ensures that network flakiness cannot turn a dualstack
// hostname IPv4/IPv6-only".)
func TestDualStackHalfAnswerKeepsList(t *testing.T) {
	rs := startResponder(t)
	rs.setA("dual.test", "127.0.0.1", "::1")
	p := startQtypeFailProxy(t, rs.addr(), typeA)
	src, err := dns.New("dual.test:9000", dns.Options{Resolver: p.addr(), Interval: 50 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	stop := src.WatchReporting(naming.Query{Object: "A.B.C"}, rec.push, rec.fail)
	defer stop()
	rec.waitFor(t, "the dual-stack list", lastIs("127.0.0.1:9000", "[::1]:9000"))

	p.name.Store("dual.test") // A questions about dual.test fail from now on
	// Several resolutions run while the A half fails (a liveness bound of seconds).
	deadline := time.Now().Add(10 * time.Second)
	for p.failed.Load() < 6 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d A questions asked in 10s", p.failed.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the resolution under way ends
	ls, fs := rec.snapshot()
	for i, l := range ls {
		if !slices.Contains(addrs(l), "127.0.0.1:9000") {
			t.Fatalf("list %d pushed while the resolver failed the A question: %v (want the last list [127.0.0.1:9000 [::1]:9000] kept; failures reported: %v)",
				i, addrs(l), fs)
		}
	}
}
