package codec

import "testing"

func TestRetName(t *testing.T) {
	tests := []struct {
		code int32
		want string
	}{
		{code: RetOK, want: "success"},
		{code: RetServerDecode, want: "server decode error"},
		{code: RetServerEncode, want: "server encode error"},
		{code: RetNoFunc, want: "no such function"},
		{code: RetNoServant, want: "no such servant"},
		{code: RetResetGrid, want: "reset grid"},
		{code: RetQueueTimeout, want: "server queue timeout"},
		{code: RetInvokeTimeout, want: "invoke timeout"},
		{code: RetProxyConnect, want: "proxy connect error"},
		{code: RetOverload, want: "server overload"},
		{code: RetNoAdapter, want: "no adapter"},
		{code: RetInvalidSet, want: "invalid set"},
		{code: RetClientDecode, want: "client decode error"},
		{code: RetSendRequest, want: "send request error"},
		{code: RetUnknown, want: "unknown server error"},
		{code: 1, want: "return code 1"},
		{code: -14, want: "return code -14"},
	}
	for _, tc := range tests {
		if got := RetName(tc.code); got != tc.want {
			t.Errorf("RetName(%d): got %q, want %q", tc.code, got, tc.want)
		}
	}
}

// The numeric values are the wire protocol's; they must never change.
func TestProtocolConstants(t *testing.T) {
	tests := []struct {
		name      string
		got, want int64
	}{
		{"PacketNormal", int64(PacketNormal), 0},
		{"PacketOneway", int64(PacketOneway), 1},
		{"VersionTars", int64(VersionTars), 1},
		{"VersionTup", int64(VersionTup), 3},
		{"VersionXML", int64(VersionXML), 4},
		{"VersionJSON", int64(VersionJSON), 5},
		{"MessageHash", int64(MessageHash), 0x01},
		{"MessageGrid", int64(MessageGrid), 0x02},
		{"MessageDyed", int64(MessageDyed), 0x04},
		{"MessageSample", int64(MessageSample), 0x08},
		{"MessageAsync", int64(MessageAsync), 0x10},
		{"MessageSetName", int64(MessageSetName), 0x80},
		{"MessageTrace", int64(MessageTrace), 0x100},
		{"RetInvokeTimeout", int64(RetInvokeTimeout), -7},
		{"RetUnknown", int64(RetUnknown), -99},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}
