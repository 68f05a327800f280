package endpoint

import (
	"math"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Protocol is the transport of an endpoint: the first word of an endpoint string.
type Protocol int

// The protocols of the TARS endpoint grammar, in the order of this package's constants (TarsCpp
// numbers them differently on the wire: UDP 0, TCP 1, SSL 2; this type is never encoded).
const (
	// TCP is "tcp", the usual TARS transport.
	TCP Protocol = iota
	// UDP is "udp".
	UDP
	// SSL is "ssl": TCP with TLS (package tlsconn; the communicator's ca, cert and key keys,
	// server.WithTLS).
	SSL
)

// String returns the protocol's word in the grammar: "tcp", "udp" or "ssl".
func (p Protocol) String() string {
	switch p {
	case TCP:
		return "tcp"
	case UDP:
		return "udp"
	case SSL:
		return "ssl"
	}
	return "Protocol(" + strconv.Itoa(int(p)) + ")"
}

// protocolOf returns the protocol named by word, which must be written in lower case as TarsCpp
// requires.
func protocolOf(word string) (Protocol, bool) {
	switch word {
	case "tcp":
		return TCP, true
	case "udp":
		return UDP, true
	case "ssl":
		return SSL, true
	}
	return 0, false
}

// Auth types of the -e option (TarsCpp's TC_Endpoint::AUTH_TYPE).
const (
	// AuthNone means the connection is not authenticated (-e 0, the default).
	AuthNone = 0
	// AuthLocal means the TARS local authentication handshake is used (-e 1): the connection's
	// first packet carries the client's credentials (package auth).
	AuthLocal = 1
)

// Weight types of the -v option (TarsCpp's EndpointManager weight types).
const (
	// WeightLoop means the endpoint takes part in plain round robin (-v 0, the default).
	WeightLoop = 0
	// WeightStatic means the -w weight applies (-v 1). TarsCpp switches an object to static
	// weighting only when all of its active endpoints say -v 1.
	WeightStatic = 1
)

// Endpoint is one server address of a TARS object, as written after '@' in a proxy string, e.g.
// "tcp -h 10.0.0.1 -p 18015 -t 60000". Endpoint values are comparable with ==.
//
// ParseEndpoint fills every field from the string; a field whose option is absent gets the value
// documented beside it. A hand-built Endpoint should set Weight to -1 unless it means a weight.
type Endpoint struct {
	Proto Protocol // the first word: tcp, udp or ssl
	Host  string   // -h: a host name or an IP address; IPv6 without brackets; "*" becomes "0.0.0.0"
	Port  int      // -p, required: 0..65535 (0: a server listens on a port the system picks)

	// Timeout is -t, written in milliseconds: in a server's adapter, how long a connection may
	// stay idle before the server closes it (TarsCpp clients carry it but do not use it). It is 0
	// if absent; TarsCpp and TarsGo then assume 3000 ms, and the user of the value decides.
	Timeout time.Duration

	Weight      int    // -w: the static weight, >= 0; -1 if absent
	WeightType  int    // -v: WeightLoop (default) or WeightStatic; other values act as WeightLoop in TarsCpp
	AuthType    int    // -e: AuthNone (default) or AuthLocal; other values are rejected
	Grid        int    // -g: grid (gray release) routing flag; 0 if absent
	Qos         int    // -q: the QoS (DSCP) value TARS endpoints carry, kept and written back; not set on sockets; 0 if absent
	SetDivision string // -s: the set (e.g. "app.sz.1") the endpoint belongs to; "" if absent
}

// Addr returns "host:port" as net.Dial wants it, bracketing an IPv6 host.
func (e Endpoint) Addr() string {
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// String returns the canonical form of the endpoint, "tcp -h 127.0.0.1 -p 18015 -t 60000": the
// protocol, -h and -p always, then -t, -g, -q, -w, -v, -e, -s only when they differ from their
// absent values. ParseEndpoint(e.String()) returns e for every e that ParseEndpoint returned;
// Timeout is written in whole milliseconds.
func (e Endpoint) String() string {
	b := make([]byte, 0, 64)
	b = e.appendTo(b)
	return string(b)
}

// SetDivisionProblem says why s is not a valid set division by TarsCpp's rule (exactly three
// '.'-separated parts, neither of the first two "*" or empty; no white space), or returns "".
// ParseEndpoint does not apply it to -s (a registry's endpoints are taken as they come); the
// places where people write sets do (conf's setdivision, naming files, devregistry).
func SetDivisionProblem(s string) string {
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return "must not contain white space"
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return `must be "name.area.group"`
	}
	for i, p := range parts {
		if p == "" {
			return "must not have an empty part"
		}
		if i < 2 && p == "*" {
			return `the name and the area must not be "*"`
		}
	}
	return ""
}

// CallProblem says why a client cannot call e, or returns "": port 0 (which asks a listening
// server for a port the system picks: no server listens there), or udp with TARS authentication
// (-e 1: udp has no connection to authenticate, and a call would go out unauthenticated).
func (e Endpoint) CallProblem() string {
	switch {
	case e.Port == 0:
		return "port 0: a client calls the port a server bound (-p 0 is only for a server)"
	case e.Proto == UDP && e.AuthType == AuthLocal:
		return "udp has no connection to authenticate (-e 1 needs tcp or ssl)"
	}
	return ""
}

// Check returns nil if e reads back as itself from its string form, as every Endpoint that
// ParseEndpoint returned does, and otherwise a *SyntaxError saying what the string form loses: a
// host with white space in it, one that reads as an option or as an endpoint separator, a
// negative timeout, grid or qos, an auth type other than AuthNone and AuthLocal, a negative
// weight other than -1, a set division with ':' or white space. An Endpoint built from something
// other than a string (a registry's EndpointF) is checked before use, so that the address a
// client dials, logs, shows and caches is the one its string says.
func (e Endpoint) Check() error {
	s := e.String()
	back, err := ParseEndpoint(s)
	if err != nil {
		return err
	}
	if back != e {
		return &SyntaxError{Msg: "does not read back as itself (it reads as " + strconv.Quote(back.String()) + ")", Input: s}
	}
	return nil
}

func (e Endpoint) appendTo(b []byte) []byte {
	b = append(b, e.Proto.String()...)
	b = append(b, " -h "...)
	b = append(b, e.Host...)
	b = append(b, " -p "...)
	b = strconv.AppendInt(b, int64(e.Port), 10)
	if e.Timeout != 0 {
		b = append(b, " -t "...)
		b = strconv.AppendInt(b, e.Timeout.Milliseconds(), 10)
	}
	if e.Grid != 0 {
		b = append(b, " -g "...)
		b = strconv.AppendInt(b, int64(e.Grid), 10)
	}
	if e.Qos != 0 {
		b = append(b, " -q "...)
		b = strconv.AppendInt(b, int64(e.Qos), 10)
	}
	if e.Weight >= 0 {
		b = append(b, " -w "...)
		b = strconv.AppendInt(b, int64(e.Weight), 10)
	}
	if e.WeightType != 0 {
		b = append(b, " -v "...)
		b = strconv.AppendInt(b, int64(e.WeightType), 10)
	}
	if e.AuthType != 0 {
		b = append(b, " -e "...)
		b = strconv.AppendInt(b, int64(e.AuthType), 10)
	}
	if e.SetDivision != "" {
		b = append(b, " -s "...)
		b = append(b, e.SetDivision...)
	}
	return b
}

// ParseEndpoint parses one endpoint, "tcp -h H -p P [-t ms] [-w n] ...", with the grammar of
// TarsCpp's TC_Endpoint::parse:
//
//   - words are separated by white space, which may also lead and trail;
//   - the first word is the protocol: tcp, udp or ssl (lower case);
//   - then options in any order, each a '-' and one character, followed by its value unless the
//     next word starts with '-'; a repeated option overrides the earlier one;
//   - -h and -p are required ("-p 0" asks a server for a port the system picks); -t, -w, -v, -e,
//     -g, -q and -s are understood too; -b (TarsGo's bind address), with or without a value, is
//     ignored; any other option is an error ("-T 3000" is a typo of -t, not a setting to drop:
//     TarsCpp ignores unknown one-letter options, but here endpoint strings are written by
//     people, and the registry sends endpoints as EndpointF structures, not strings);
//   - a word that is neither an option nor an option's value is an error, as in TarsCpp.
//
// Numbers are decimal and cannot be negative: "-p -1" is a bad port (a word starting with '-'
// is otherwise never a value, so "-h -p 1" is a missing host). A host
// may be written in brackets, "[::1]"; it is stored without them. The error is a *SyntaxError
// that names the offending part and quotes s.
func ParseEndpoint(s string) (Endpoint, error) {
	e := Endpoint{Weight: -1}
	fail := func(format string, arg string) (Endpoint, error) {
		return Endpoint{}, &SyntaxError{Msg: format + " " + strconv.Quote(arg), Input: s}
	}

	words := strings.Fields(s)
	if len(words) == 0 {
		return Endpoint{}, &SyntaxError{Msg: "empty endpoint", Input: s}
	}
	proto, ok := protocolOf(words[0])
	if !ok {
		if host, port, err := net.SplitHostPort(words[0]); err == nil && len(words) == 1 {
			// host:port, as a Go address is written: say how TARS writes it.
			return Endpoint{}, &SyntaxError{Msg: "bad protocol " + strconv.Quote(words[0]) +
				": an endpoint is written " + strconv.Quote("tcp -h "+host+" -p "+port), Input: s}
		}
		return fail("bad protocol", words[0])
	}
	e.Proto = proto

	hasHost, hasPort := false, false
	for i := 1; i < len(words); i++ {
		opt := words[i]
		if len(opt) != 2 || opt[0] != '-' {
			if opt[0] == '-' {
				return fail("bad option", opt)
			}
			return fail("unexpected word", opt)
		}
		val, hasVal := "", false
		if i+1 < len(words) && (words[i+1][0] != '-' || negativeNumber(opt[1], words[i+1])) {
			i++
			val, hasVal = words[i], true
		}
		if !hasVal && strings.IndexByte("hptwvegqs", opt[1]) >= 0 {
			return fail("missing value for", opt)
		}
		var err bool
		switch opt[1] {
		case 'h':
			h, ok := parseHost(val)
			if !ok {
				return fail("bad host", val)
			}
			e.Host, hasHost = h, true
		case 'p':
			e.Port, err = parseInt(val, 65535)
			if err {
				return fail("bad port", val)
			}
			hasPort = true
		case 't':
			var ms int
			ms, err = parseInt(val, math.MaxInt32)
			if err {
				return fail("bad timeout", val)
			}
			e.Timeout = time.Duration(ms) * time.Millisecond
		case 'w':
			e.Weight, err = parseInt(val, math.MaxInt32)
			if err {
				return fail("bad weight", val)
			}
		case 'v':
			e.WeightType, err = parseInt(val, math.MaxInt32)
			if err {
				return fail("bad weight type", val)
			}
		case 'e':
			e.AuthType, err = parseInt(val, AuthLocal)
			if err {
				return fail("bad auth type", val)
			}
		case 'g':
			e.Grid, err = parseInt(val, math.MaxInt32)
			if err {
				return fail("bad grid", val)
			}
		case 'q':
			e.Qos, err = parseInt(val, math.MaxInt32)
			if err {
				return fail("bad qos", val)
			}
		case 's':
			// ':' separates endpoints; a set name never holds one.
			if strings.IndexByte(val, ':') >= 0 {
				return fail("bad set division", val)
			}
			e.SetDivision = val
		case 'b':
		default:
			return fail("unknown option", opt)
		}
	}
	if !hasHost {
		return Endpoint{}, &SyntaxError{Msg: "missing host (-h)", Input: s}
	}
	if !hasPort {
		return Endpoint{}, &SyntaxError{Msg: "missing port (-p)", Input: s}
	}
	return e, nil
}

// negativeNumber reports whether word, which starts with '-', is a negative number given to the
// numeric option opt ("-p -1"): it is then the option's (bad) value, so that the error says
// "bad port", not "missing value". After any other option such a word is an option.
func negativeNumber(opt byte, word string) bool {
	return strings.IndexByte("ptwvegq", opt) >= 0 && len(word) > 1 && word[1] >= '0' && word[1] <= '9'
}

// parseInt parses a decimal in 0..max; bad is true when it is not one.
func parseInt(s string, max int) (n int, bad bool) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > max {
		return 0, true
	}
	return n, false
}

// parseHost strips the brackets of an IPv6 literal and maps "*" to "0.0.0.0" as TarsCpp does. It
// rejects what could not be written back: a host starting with '-' (it would read as an option) or
// ending in ":tcp", ":udp" or ":ssl" (it would read as an endpoint separator).
func parseHost(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	if s == "" || s[0] == '-' || strings.ContainsAny(s, "[]") {
		return "", false
	}
	if n := len(s); n >= 4 && s[n-4] == ':' {
		if _, ok := protocolOf(s[n-3:]); ok {
			return "", false
		}
	}
	if s == "*" {
		return "0.0.0.0", true
	}
	return s, true
}
