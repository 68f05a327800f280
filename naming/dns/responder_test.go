package dns_test

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// DNS wire constants (RFC 1035, RFC 2782, RFC 3596).
const (
	typeA    = 1
	typeAAAA = 28
	typeSRV  = 33
	classIN  = 1

	rcodeNXDomain = 3
)

// srvRecord is one SRV answer.
type srvRecord struct {
	priority, weight, port uint16
	target                 string
}

// responder is a small DNS server for the tests, on UDP on loopback: it answers A, AAAA and SRV
// questions from maps the test changes, NXDOMAIN for a name it does not know, and counts the
// questions asked.
type responder struct {
	conn *net.UDPConn
	done chan struct{}

	mu   sync.Mutex
	a    map[string][]netip.Addr // A and AAAA, by lower-case name without the final dot
	srv  map[string][]srvRecord
	asks map[string]int // questions by name
}

func startResponder(t *testing.T) *responder {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &responder{conn: c, done: make(chan struct{}), a: map[string][]netip.Addr{}, srv: map[string][]srvRecord{}, asks: map[string]int{}}
	go r.serve()
	t.Cleanup(r.stop)
	return r
}

func (r *responder) addr() string { return r.conn.LocalAddr().String() }

// stop closes the socket: queries then meet a closed port.
func (r *responder) stop() {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.conn.Close()
	<-r.done
}

func key(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// setA makes name resolve to addrs (none: NXDOMAIN).
func (r *responder) setA(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(addrs) == 0 {
		delete(r.a, key(name))
		return
	}
	var as []netip.Addr
	for _, s := range addrs {
		as = append(as, netip.MustParseAddr(s))
	}
	r.a[key(name)] = as
}

// setSRV makes name's SRV records recs (none: NXDOMAIN).
func (r *responder) setSRV(name string, recs ...srvRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(recs) == 0 {
		delete(r.srv, key(name))
		return
	}
	r.srv[key(name)] = recs
}

func (r *responder) asked(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asks[key(name)]
}

func (r *responder) serve() {
	defer close(r.done)
	buf := make([]byte, 1500)
	for {
		n, from, err := r.conn.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if out := r.answer(buf[:n]); out != nil {
			_, _ = r.conn.WriteToUDP(out, from)
		}
	}
}

// answer builds the response to the query q, or nil for a query it cannot read.
func (r *responder) answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	name, end, ok := readName(q, 12)
	if !ok || end+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end:])
	question := q[12 : end+4]

	r.mu.Lock()
	r.asks[key(name)]++
	addrs, knownA := r.a[key(name)]
	srvs, knownSRV := r.srv[key(name)]
	r.mu.Unlock()

	var answers [][]byte
	rr := func(typ uint16, rdata []byte) {
		b := []byte{0xC0, 12} // the name: a pointer to the question's
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, classIN)
		b = binary.BigEndian.AppendUint32(b, 1) // TTL
		b = binary.BigEndian.AppendUint16(b, uint16(len(rdata)))
		answers = append(answers, append(b, rdata...))
	}
	switch qtype {
	case typeA:
		for _, a := range addrs {
			if a.Is4() {
				rr(typeA, a.AsSlice())
			}
		}
	case typeAAAA:
		for _, a := range addrs {
			if a.Is6() {
				rr(typeAAAA, a.AsSlice())
			}
		}
	case typeSRV:
		for _, s := range srvs {
			d := binary.BigEndian.AppendUint16(nil, s.priority)
			d = binary.BigEndian.AppendUint16(d, s.weight)
			d = binary.BigEndian.AppendUint16(d, s.port)
			rr(typeSRV, appendName(d, s.target))
		}
	}
	flags := uint16(0x8000 | 0x0400 | 0x0080)        // QR, AA, RA
	flags |= binary.BigEndian.Uint16(q[2:]) & 0x0100 // RD as asked
	if !knownA && !knownSRV {
		flags |= rcodeNXDomain
	}
	out := append([]byte(nil), q[0:2]...) // the id
	out = binary.BigEndian.AppendUint16(out, flags)
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(answers)))
	out = binary.BigEndian.AppendUint16(out, 0)
	out = binary.BigEndian.AppendUint16(out, 0)
	out = append(out, question...)
	for _, a := range answers {
		out = append(out, a...)
	}
	return out
}

// readName reads the uncompressed name at off (queries carry no compression), returning it
// dotted and the offset after it.
func readName(b []byte, off int) (string, int, bool) {
	var labels []string
	for off < len(b) {
		n := int(b[off])
		off++
		if n == 0 {
			return strings.Join(labels, "."), off, true
		}
		if n > 63 || off+n > len(b) {
			return "", 0, false
		}
		labels = append(labels, string(b[off:off+n]))
		off += n
	}
	return "", 0, false
}

// appendName appends name in wire form, uncompressed.
func appendName(b []byte, name string) []byte {
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	return append(b, 0)
}
