package endpoint

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProtocolString(t *testing.T) {
	tests := []struct {
		proto Protocol
		want  string
	}{
		{proto: TCP, want: "tcp"},
		{proto: UDP, want: "udp"},
		{proto: SSL, want: "ssl"},
		{proto: Protocol(7), want: "Protocol(7)"},
	}
	for _, tt := range tests {
		if got := tt.proto.String(); got != tt.want {
			t.Errorf("Protocol(%d).String() = %q, want %q", int(tt.proto), got, tt.want)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Endpoint
		wantErr string // the whole error text when parsing must fail
	}{
		{
			name: "minimal",
			in:   "tcp -h 127.0.0.1 -p 18015",
			want: Endpoint{Proto: TCP, Host: "127.0.0.1", Port: 18015, Weight: -1},
		},
		{
			name: "timeout",
			in:   "tcp -h 127.0.0.1 -p 18015 -t 60000",
			want: Endpoint{Proto: TCP, Host: "127.0.0.1", Port: 18015, Timeout: 60 * time.Second, Weight: -1},
		},
		{
			name: "udp",
			in:   "udp -h 10.0.0.1 -p 53",
			want: Endpoint{Proto: UDP, Host: "10.0.0.1", Port: 53, Weight: -1},
		},
		{
			name: "ssl",
			in:   "ssl -h example.com -p 443",
			want: Endpoint{Proto: SSL, Host: "example.com", Port: 443, Weight: -1},
		},
		{
			name: "every option",
			in:   "tcp -h h -p 1 -t 2 -g 3 -q 4 -w 5 -v 1 -e 1 -s app.sz.1",
			want: Endpoint{Proto: TCP, Host: "h", Port: 1, Timeout: 2 * time.Millisecond, Grid: 3, Qos: 4,
				Weight: 5, WeightType: 1, AuthType: 1, SetDivision: "app.sz.1"},
		},
		{
			name: "options in any order",
			in:   "tcp -t 3000 -p 80 -w 0 -h host",
			want: Endpoint{Proto: TCP, Host: "host", Port: 80, Timeout: 3 * time.Second, Weight: 0},
		},
		{
			name: "white space tolerated",
			in:   " \t tcp\t-h   1.2.3.4\n-p 5 \r\n",
			want: Endpoint{Proto: TCP, Host: "1.2.3.4", Port: 5, Weight: -1},
		},
		{
			name: "repeated option: last wins",
			in:   "tcp -h a -p 1 -h b -p 2",
			want: Endpoint{Proto: TCP, Host: "b", Port: 2, Weight: -1},
		},
		{
			name: "ipv6 loopback",
			in:   "tcp -h ::1 -p 10000",
			want: Endpoint{Proto: TCP, Host: "::1", Port: 10000, Weight: -1},
		},
		{
			name: "ipv6 link local",
			in:   "tcp -h fe80::1 -p 1",
			want: Endpoint{Proto: TCP, Host: "fe80::1", Port: 1, Weight: -1},
		},
		{
			name: "ipv6 in brackets",
			in:   "tcp -h [2001:db8::7] -p 8080",
			want: Endpoint{Proto: TCP, Host: "2001:db8::7", Port: 8080, Weight: -1},
		},
		{
			name: "star host",
			in:   "tcp -h * -p 0",
			want: Endpoint{Proto: TCP, Host: "0.0.0.0", Port: 0, Weight: -1},
		},
		{
			name: "port bounds",
			in:   "tcp -h a -p 65535",
			want: Endpoint{Proto: TCP, Host: "a", Port: 65535, Weight: -1},
		},
		{
			name: "TarsGo's bind address, ignored",
			in:   "tcp -h a -p 1 -b 10.0.0.9",
			want: Endpoint{Proto: TCP, Host: "a", Port: 1, Weight: -1},
		},
		{
			name: "TarsGo's bind address without value",
			in:   "tcp -h a -b -p 1",
			want: Endpoint{Proto: TCP, Host: "a", Port: 1, Weight: -1},
		},
		{
			name: "plus sign and leading zeros",
			in:   "tcp -h a -p +080",
			want: Endpoint{Proto: TCP, Host: "a", Port: 80, Weight: -1},
		},
		{name: "empty", in: "", wantErr: `endpoint: empty endpoint in ""`},
		{name: "blank", in: " \t ", wantErr: `endpoint: empty endpoint in " \t "`},
		{name: "bad protocol", in: "http -h a -p 1", wantErr: `endpoint: bad protocol "http" in "http -h a -p 1"`},
		{name: "upper-case protocol", in: "TCP -h a -p 1", wantErr: `endpoint: bad protocol "TCP" in "TCP -h a -p 1"`},
		{name: "missing host", in: "tcp -p 1", wantErr: `endpoint: missing host (-h) in "tcp -p 1"`},
		{name: "host without value", in: "tcp -h -p 1", wantErr: `endpoint: missing value for "-h" in "tcp -h -p 1"`},
		{name: "host at end without value", in: "tcp -p 1 -h", wantErr: `endpoint: missing value for "-h" in "tcp -p 1 -h"`},
		{name: "empty brackets", in: "tcp -h [] -p 1", wantErr: `endpoint: bad host "[]" in "tcp -h [] -p 1"`},
		{name: "stray bracket", in: "tcp -h [::1 -p 1", wantErr: `endpoint: bad host "[::1" in "tcp -h [::1 -p 1"`},
		{name: "bracketed dash", in: "tcp -h [-x] -p 1", wantErr: `endpoint: bad host "[-x]" in "tcp -h [-x] -p 1"`},
		{name: "host like a separator", in: "tcp -h a:tcp -p 1", wantErr: `endpoint: bad host "a:tcp" in "tcp -h a:tcp -p 1"`},
		{name: "port too big", in: "tcp -h 1.2.3.4 -p 70000", wantErr: `endpoint: bad port "70000" in "tcp -h 1.2.3.4 -p 70000"`},
		{name: "port not a number", in: "tcp -h a -p http", wantErr: `endpoint: bad port "http" in "tcp -h a -p http"`},
		{name: "port with garbage", in: "tcp -h a -p 80x", wantErr: `endpoint: bad port "80x" in "tcp -h a -p 80x"`},
		{name: "port absent", in: "tcp -h localhost", wantErr: `endpoint: missing port (-p) in "tcp -h localhost"`},
		{name: "port absent with options", in: "ssl -h a -t 3000 -w 2", wantErr: `endpoint: missing port (-p) in "ssl -h a -t 3000 -w 2"`},
		{name: "negative port", in: "tcp -h a -p -1", wantErr: `endpoint: bad port "-1" in "tcp -h a -p -1"`},
		{name: "negative port last", in: "tcp -p -65535 -h a", wantErr: `endpoint: bad port "-65535" in "tcp -p -65535 -h a"`},
		{name: "negative timeout", in: "tcp -h a -p 1 -t -5", wantErr: `endpoint: bad timeout "-5" in "tcp -h a -p 1 -t -5"`},
		{name: "negative weight", in: "tcp -h a -p 1 -w -1", wantErr: `endpoint: bad weight "-1" in "tcp -h a -p 1 -w -1"`},
		{name: "port followed by option", in: "tcp -h a -p -t 5", wantErr: `endpoint: missing value for "-p" in "tcp -h a -p -t 5"`},
		{name: "host never takes a dash word", in: "tcp -h -1 -p 1", wantErr: `endpoint: missing value for "-h" in "tcp -h -1 -p 1"`},
		{name: "port without value", in: "tcp -h a -p", wantErr: `endpoint: missing value for "-p" in "tcp -h a -p"`},
		{name: "bad timeout", in: "tcp -h a -t 1s", wantErr: `endpoint: bad timeout "1s" in "tcp -h a -t 1s"`},
		{name: "timeout overflow", in: "tcp -h a -t 99999999999", wantErr: `endpoint: bad timeout "99999999999" in "tcp -h a -t 99999999999"`},
		{name: "bad weight", in: "tcp -h a -w 1.5", wantErr: `endpoint: bad weight "1.5" in "tcp -h a -w 1.5"`},
		{name: "bad weight type", in: "tcp -h a -v x", wantErr: `endpoint: bad weight type "x" in "tcp -h a -v x"`},
		{name: "bad auth type", in: "tcp -h a -e 2", wantErr: `endpoint: bad auth type "2" in "tcp -h a -e 2"`},
		{name: "bad grid", in: "tcp -h a -g g", wantErr: `endpoint: bad grid "g" in "tcp -h a -g g"`},
		{name: "bad qos", in: "tcp -h a -q q", wantErr: `endpoint: bad qos "q" in "tcp -h a -q q"`},
		{name: "set with colon", in: "tcp -h a -s x:y", wantErr: `endpoint: bad set division "x:y" in "tcp -h a -s x:y"`},
		{name: "long option", in: "tcp -host a", wantErr: `endpoint: bad option "-host" in "tcp -host a"`},
		{name: "stray word", in: "tcp -h a b", wantErr: `endpoint: unexpected word "b" in "tcp -h a b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEndpoint(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseEndpoint(%q) = %+v, want error %q", tt.in, got, tt.wantErr)
				}
				if err.Error() != tt.wantErr {
					t.Fatalf("ParseEndpoint(%q) error = %q, want %q", tt.in, err, tt.wantErr)
				}
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("ParseEndpoint(%q) error %T is not a *SyntaxError", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseEndpoint(%q) error = %v, want %+v", tt.in, err, tt.want)
			}
			if got != tt.want {
				t.Fatalf("ParseEndpoint(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			again, err := ParseEndpoint(got.String())
			if err != nil || again != got {
				t.Fatalf("ParseEndpoint(%q) = %+v, %v; want %+v", got.String(), again, err, got)
			}
		})
	}
}

func TestEndpointString(t *testing.T) {
	tests := []struct {
		name string
		e    Endpoint
		want string
	}{
		{
			name: "plain",
			e:    Endpoint{Proto: TCP, Host: "127.0.0.1", Port: 18015, Timeout: time.Minute, Weight: -1},
			want: "tcp -h 127.0.0.1 -p 18015 -t 60000",
		},
		{
			name: "no timeout",
			e:    Endpoint{Proto: UDP, Host: "::1", Port: 1, Weight: -1},
			want: "udp -h ::1 -p 1",
		},
		{
			name: "zero weight is written",
			e:    Endpoint{Proto: TCP, Host: "h", Port: 1},
			want: "tcp -h h -p 1 -w 0",
		},
		{
			name: "all options",
			e: Endpoint{Proto: SSL, Host: "h", Port: 2, Timeout: 1500 * time.Microsecond, Grid: 1, Qos: 2,
				Weight: 3, WeightType: 1, AuthType: 1, SetDivision: "a.b.c"},
			want: "ssl -h h -p 2 -t 1 -g 1 -q 2 -w 3 -v 1 -e 1 -s a.b.c",
		},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("%s: String() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestEndpointAddr(t *testing.T) {
	tests := []struct {
		e    Endpoint
		want string
	}{
		{e: Endpoint{Host: "127.0.0.1", Port: 18015}, want: "127.0.0.1:18015"},
		{e: Endpoint{Host: "::1", Port: 10000}, want: "[::1]:10000"},
		{e: Endpoint{Host: "example.com", Port: 0}, want: "example.com:0"},
	}
	for _, tt := range tests {
		if got := tt.e.Addr(); got != tt.want {
			t.Errorf("%+v.Addr() = %q, want %q", tt.e, got, tt.want)
		}
	}
}

// TestCheck: an Endpoint whose string form reads back as another (or not at all) is refused,
// naming what the string says; every endpoint ParseEndpoint returns passes.
func TestCheck(t *testing.T) {
	good := Endpoint{Proto: TCP, Host: "10.0.0.1", Port: 80, Weight: -1}
	with := func(edit func(*Endpoint)) Endpoint { e := good; edit(&e); return e }
	for _, tt := range []struct {
		name string
		e    Endpoint
		want string // in the error; "" for none
	}{
		{"good", good, ""},
		{"ipv6", with(func(e *Endpoint) { e.Host = "fe80::1" }), ""},
		{"static weight 0", with(func(e *Endpoint) { e.Weight, e.WeightType = 0, WeightStatic }), ""},
		{"every option", Endpoint{Proto: SSL, Host: "h", Port: 1, Timeout: time.Second, Weight: 3, WeightType: 1, AuthType: AuthLocal, Grid: 2, Qos: 4, SetDivision: "a.b.c"}, ""},
		{"host with an option in it", with(func(e *Endpoint) { e.Host = "10.0.0.1 -p 9" }), `reads as "tcp -h 10.0.0.1 -p 80"`},
		{"host read as an option", with(func(e *Endpoint) { e.Host = "-x" }), `missing value for "-h"`},
		{"host read as a separator", with(func(e *Endpoint) { e.Host = "a:tcp" }), `bad host "a:tcp"`},
		{"empty host", with(func(e *Endpoint) { e.Host = "" }), `missing value for "-h"`},
		{"negative timeout", with(func(e *Endpoint) { e.Timeout = -5 * time.Millisecond }), `bad timeout "-5"`},
		{"timeout below a millisecond", with(func(e *Endpoint) { e.Timeout = time.Microsecond }), "does not read back"},
		{"negative grid", with(func(e *Endpoint) { e.Grid = -1 }), `bad grid "-1"`},
		{"negative qos", with(func(e *Endpoint) { e.Qos = -2 }), `bad qos "-2"`},
		{"unknown auth type", with(func(e *Endpoint) { e.AuthType = 7 }), `bad auth type "7"`},
		{"negative weight", with(func(e *Endpoint) { e.Weight = -3 }), "does not read back"},
		{"set with a separator", with(func(e *Endpoint) { e.SetDivision = "a.b:c" }), `bad set division "a.b:c"`},
		{"set with a space", with(func(e *Endpoint) { e.SetDivision = "a b" }), `unexpected word "b"`},
		{"port out of range", with(func(e *Endpoint) { e.Port = 70000 }), `bad port "70000"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.e.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check(%q) = %v, want nil", tt.e.String(), err)
			case tt.want != "" && err == nil:
				t.Fatalf("Check(%q) = nil, want an error with %q", tt.e.String(), tt.want)
			case tt.want != "":
				var se *SyntaxError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Check(%q) = %v, want a *SyntaxError with %q", tt.e.String(), err, tt.want)
				}
			}
		})
	}
}
