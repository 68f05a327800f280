package endpoint

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	ep := func(proto Protocol, host string, port int) Endpoint {
		return Endpoint{Proto: proto, Host: host, Port: port, Weight: -1}
	}
	withTimeout := func(e Endpoint, d time.Duration) Endpoint { e.Timeout = d; return e }

	tests := []struct {
		name    string
		in      string
		want    Target
		wantStr string // canonical form; "" means the same as in
		wantErr string // the whole error text when parsing must fail
	}{
		{
			name: "bare object",
			in:   "Hello.Server.GreeterObj",
			want: Target{Object: "Hello.Server.GreeterObj"},
		},
		{
			name: "one endpoint",
			in:   "Hello.Server.GreeterObj@tcp -h 127.0.0.1 -p 18015 -t 60000",
			want: Target{Object: "Hello.Server.GreeterObj", Endpoints: []Endpoint{
				withTimeout(ep(TCP, "127.0.0.1", 18015), time.Minute),
			}},
		},
		{
			name: "several endpoints",
			in:   "A.B.C@tcp -h 10.0.0.1 -p 18015 -t 60000:tcp -h 10.0.0.2 -p 18015:udp -h 10.0.0.3 -p 9",
			want: Target{Object: "A.B.C", Endpoints: []Endpoint{
				withTimeout(ep(TCP, "10.0.0.1", 18015), time.Minute),
				ep(TCP, "10.0.0.2", 18015),
				ep(UDP, "10.0.0.3", 9),
			}},
		},
		{
			name:    "white space around everything",
			in:      "  A.B.C @ tcp -h 10.0.0.1 -p 1 : tcp -h 10.0.0.2 -p 2\t:\n ssl -h h -p 3  ",
			want:    Target{Object: "A.B.C", Endpoints: []Endpoint{ep(TCP, "10.0.0.1", 1), ep(TCP, "10.0.0.2", 2), ep(SSL, "h", 3)}},
			wantStr: "A.B.C@tcp -h 10.0.0.1 -p 1:tcp -h 10.0.0.2 -p 2:ssl -h h -p 3",
		},
		{
			name: "ipv6 hosts",
			in:   "A.B.C@tcp -h ::1 -p 10000:tcp -h fe80::1 -p 1",
			want: Target{Object: "A.B.C", Endpoints: []Endpoint{ep(TCP, "::1", 10000), ep(TCP, "fe80::1", 1)}},
		},
		{
			name:    "ipv6 host ending in colons before the separator",
			in:      "A.B.C@tcp -p 1 -h fe80:::tcp -h ::1 -p 2",
			want:    Target{Object: "A.B.C", Endpoints: []Endpoint{ep(TCP, "fe80::", 1), ep(TCP, "::1", 2)}},
			wantStr: "A.B.C@tcp -h fe80:: -p 1:tcp -h ::1 -p 2",
		},
		{
			name:    "ipv6 host ending in colons at the end",
			in:      "A.B.C@tcp -p 1 -h fe80::",
			want:    Target{Object: "A.B.C", Endpoints: []Endpoint{ep(TCP, "fe80::", 1)}},
			wantStr: "A.B.C@tcp -h fe80:: -p 1",
		},
		{
			name:    "ipv6 in brackets",
			in:      "A.B.C@tcp -h [::1] -p 1",
			want:    Target{Object: "A.B.C", Endpoints: []Endpoint{ep(TCP, "::1", 1)}},
			wantStr: "A.B.C@tcp -h ::1 -p 1",
		},
		{
			name:    "host containing a protocol word",
			in:      "A.B.C@tcp -h tcp.example.com -p 1:udp -h sslhost -p 2",
			want:    Target{Object: "A.B.C", Endpoints: []Endpoint{ep(TCP, "tcp.example.com", 1), ep(UDP, "sslhost", 2)}},
			wantStr: "",
		},
		{
			name:    "trailing separator",
			in:      "A.B.C@tcp -h 127.0.0.1 -p 1 -t 3000: ",
			want:    Target{Object: "A.B.C", Endpoints: []Endpoint{withTimeout(ep(TCP, "127.0.0.1", 1), 3*time.Second)}},
			wantStr: "A.B.C@tcp -h 127.0.0.1 -p 1 -t 3000",
		},
		{
			name:    "bind address dropped",
			in:      "A.B.C@tcp -h a -p 1 -b 0.0.0.0:tcp -b -h b -p 2",
			want:    Target{Object: "A.B.C", Endpoints: []Endpoint{ep(TCP, "a", 1), ep(TCP, "b", 2)}},
			wantStr: "A.B.C@tcp -h a -p 1:tcp -h b -p 2",
		},
		{
			name: "tag",
			in:   "A.B.C#2@tcp -h a -p 1",
			want: Target{Object: "A.B.C", Tag: "2", Endpoints: []Endpoint{ep(TCP, "a", 1)}},
		},
		{
			name:    "empty tag",
			in:      "A.B.C#",
			want:    Target{Object: "A.B.C"},
			wantStr: "A.B.C",
		},
		{
			name: "every option",
			in:   "A.B.C@tcp -h a -p 1 -t 2 -g 3 -q 4 -w 5 -v 1 -e 1 -s app.sz.1:tcp -h b -p 2 -w 0",
			want: Target{Object: "A.B.C", Endpoints: []Endpoint{
				{Proto: TCP, Host: "a", Port: 1, Timeout: 2 * time.Millisecond, Grid: 3, Qos: 4, Weight: 5,
					WeightType: 1, AuthType: 1, SetDivision: "app.sz.1"},
				{Proto: TCP, Host: "b", Port: 2, Weight: 0},
			}},
		},
		{name: "empty", in: "", wantErr: `endpoint: empty object in ""`},
		{name: "empty object", in: "@tcp -h a -p 1", wantErr: `endpoint: empty object in "@tcp -h a -p 1"`},
		{name: "only a tag", in: "#x", wantErr: `endpoint: empty object in "#x"`},
		{name: "space in object", in: "A B@tcp -h a -p 1", wantErr: `endpoint: bad object "A B" in "A B@tcp -h a -p 1"`},
		{name: "nothing after @", in: "A.B.C@", wantErr: `endpoint: no endpoint after '@' in "A.B.C@"`},
		{name: "only separators after @", in: "A.B.C@ : ", wantErr: `endpoint: no endpoint after '@' in "A.B.C@ : "`},
		{
			name:    "bad port in the second endpoint",
			in:      "A.B.C@tcp -h a -p 1:tcp -h 1.2.3.4 -p 70000",
			wantErr: `endpoint: bad port "70000" in "tcp -h 1.2.3.4 -p 70000"`,
		},
		{
			name:    "missing host",
			in:      "A.B.C@tcp -p 1",
			wantErr: `endpoint: missing host (-h) in "tcp -p 1"`,
		},
		{
			name:    "not an endpoint",
			in:      "A.B.C@127.0.0.1:18015",
			wantErr: `endpoint: bad protocol "127.0.0.1:18015": an endpoint is written "tcp -h 127.0.0.1 -p 18015" in "127.0.0.1:18015"`,
		},
		{
			name:    "separator without a protocol",
			in:      "A.B.C@tcp -h a -p 1:-h b -p 2",
			wantErr: `endpoint: bad port "1:-h" in "tcp -h a -p 1:-h b -p 2"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("Parse(%q) = %+v, want error %q", tt.in, got, tt.wantErr)
				}
				if err.Error() != tt.wantErr {
					t.Fatalf("Parse(%q) error = %q, want %q", tt.in, err, tt.wantErr)
				}
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("Parse(%q) error %T is not a *SyntaxError", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) error = %v, want %+v", tt.in, err, tt.want)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) =\n %+v, want\n %+v", tt.in, got, tt.want)
			}
			wantStr := tt.wantStr
			if wantStr == "" {
				wantStr = tt.in
			}
			if s := got.String(); s != wantStr {
				t.Fatalf("Parse(%q).String() = %q, want %q", tt.in, s, wantStr)
			}
			again, err := Parse(got.String())
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", got.String(), again, err, got)
			}
		})
	}
}
