package endpoint

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Target is a parsed proxy string, "Obj@ep:ep:...": the object (servant) to call and, when the
// string names them, its endpoints. Endpoints is nil for a bare "Obj"; naming resolves it later.
type Target struct {
	// Object is the servant name sent in every request, e.g. "Hello.Server.GreeterObj".
	Object string
	// Tag is the text after '#' in "Obj#tag@...", "" if none. TarsCpp strips it from the servant
	// name and uses it only to tell proxies apart, so that "Obj#1" and "Obj#2" get proxies with
	// connections of their own; a caller caching proxies by string does the same.
	Tag string
	// Endpoints are the addresses written after '@', in the order written.
	Endpoints []Endpoint
}

// String returns the canonical proxy string: Object, "#"+Tag if Tag is set, then "@" and the
// endpoints' canonical forms joined by ':' if there are any. Parse(t.String()) returns t for every
// t that Parse returned.
func (t Target) String() string {
	b := make([]byte, 0, len(t.Object)+len(t.Tag)+1+64*len(t.Endpoints))
	b = append(b, t.Object...)
	if t.Tag != "" {
		b = append(b, '#')
		b = append(b, t.Tag...)
	}
	for i, e := range t.Endpoints {
		if i == 0 {
			b = append(b, '@')
		} else {
			b = append(b, ':')
		}
		b = e.appendTo(b)
	}
	return string(b)
}

// Parse parses a whole proxy string, "Obj", "Obj@tcp -h H -p P" or "Obj@ep1:ep2:...".
//
// The object is everything before the first '@', trimmed; it must not be empty or contain white
// space. The endpoints follow the '@' and are separated by ':'. Because an IPv6 host contains ':'
// too, only a ':' followed by optional white space and a protocol word (tcp, udp or ssl) standing
// alone separates endpoints; "tcp -h ::1 -p 1:tcp -h fe80::1 -p 2" is two endpoints. TarsCpp's
// TC_Endpoint::sepEndpoint splits before any occurrence of "tcp", "udp" or "ssl", even inside a
// host name; this rule agrees with it on every string where that is not a bug. As in TarsCpp, a
// trailing ':' after the last endpoint is allowed unless it ends a host like "fe80::". Each
// endpoint is parsed by ParseEndpoint. A '@' with no endpoint after it is an error.
//
// The error is a *SyntaxError naming the offending part.
func Parse(s string) (Target, error) {
	obj, list, hasList := strings.Cut(s, "@")
	obj = strings.TrimSpace(obj)
	if strings.IndexFunc(obj, unicode.IsSpace) >= 0 {
		return Target{}, &SyntaxError{Msg: "bad object " + strconv.Quote(obj), Input: s}
	}
	var t Target
	t.Object, t.Tag, _ = strings.Cut(obj, "#")
	if t.Object == "" {
		return Target{}, &SyntaxError{Msg: "empty object", Input: s}
	}
	if !hasList {
		return t, nil
	}

	list = strings.TrimSpace(list)
	start := 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) && (list[i] != ':' || !isSeparator(list, i)) {
			continue
		}
		seg := strings.TrimSpace(list[start:i])
		start = i + 1
		if seg == "" {
			continue
		}
		e, err := ParseEndpoint(seg)
		if err != nil {
			return Target{}, err
		}
		t.Endpoints = append(t.Endpoints, e)
	}
	if len(t.Endpoints) == 0 {
		return Target{}, &SyntaxError{Msg: "no endpoint after '@'", Input: s}
	}
	return t, nil
}

// isSeparator reports whether the ':' at s[i] separates two endpoints: it is followed by optional
// white space and a protocol word that ends at white space or at the end of s, or it is the last
// non-space character of s and does not follow another ':'.
func isSeparator(s string, i int) bool {
	j := i + 1
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if !unicode.IsSpace(r) {
			break
		}
		j += size
	}
	if j == len(s) {
		return i == 0 || s[i-1] != ':'
	}
	if len(s)-j < 3 {
		return false
	}
	if _, ok := protocolOf(s[j : j+3]); !ok {
		return false
	}
	j += 3
	if j == len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[j:])
	return unicode.IsSpace(r)
}
