package auth

import (
	"errors"
	"testing"
	"time"

	"github.com/tarscomm/tarscomm/codec"
)

// TestDoubleSHA1 checks the hex form of the hashes against TarsCpp's own vector: the double
// SHA-1 of "123456", written in AuthLogic.cpp.
func TestDoubleSHA1(t *testing.T) {
	if got := string(hexSHA1(hexSHA1([]byte("123456")))); got != "69c5fcebaa65b560eaf06c3fbeb481ae44b8d618" {
		t.Fatalf("secret2 of 123456 = %s", got)
	}
}

func keys(m map[string]string) func(string) (string, bool) {
	return func(ak string) (string, bool) { sk, ok := m[ak]; return sk, ok }
}

// TestRequestVerify builds requests and checks each state Verify can return.
func TestRequestVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	good := Credentials{AccessKey: "ak", SecretKey: "s3cret"}
	ks := keys(map[string]string{"ak": "s3cret"})
	body := func(servant string, c Credentials, at time.Time) *codec.RequestPacket {
		frame, err := AppendRequest(nil, servant, c, at)
		if err != nil {
			t.Fatal(err)
		}
		var req codec.RequestPacket
		if err := codec.DecodeRequest(frame, &req); err != nil {
			t.Fatal(err)
		}
		return &req
	}
	req := body("A.B.Obj", good, now)
	if !IsRequest(req) || req.MessageType != MessageType || req.RequestID != RequestID || req.ServantName != "A.B.Obj" {
		t.Fatalf("auth request header: %+v", req)
	}
	if sig, _ := codec.NewDecoder(req.Buffer).ReadString(5, true); len(sig) != 48 {
		t.Fatalf("signature of 40 hex chars is %d bytes, want 48 (3DES, PKCS#5)", len(sig))
	}
	for _, tc := range []struct {
		name    string
		req     *codec.RequestPacket
		servant string
		at      time.Time
		want    State
	}{
		{"good", req, "A.B.Obj", now, StateOK},
		{"clock 59 minutes ahead", req, "A.B.Obj", now.Add(59 * time.Minute), StateOK},
		{"clock 61 minutes ahead", req, "A.B.Obj", now.Add(61 * time.Minute), StateWrongTime},
		{"another object", req, "A.B.Other", now, StateWrongObj},
		{"unknown access key", body("A.B.Obj", Credentials{AccessKey: "nobody", SecretKey: "s3cret"}, now), "A.B.Obj", now, StateWrongAK},
		{"wrong secret", body("A.B.Obj", Credentials{AccessKey: "ak", SecretKey: "guess"}, now), "A.B.Obj", now, StateError},
		{"garbage", &codec.RequestPacket{Buffer: []byte{1, 2, 3}}, "A.B.Obj", now, StateProtoErr},
	} {
		if got := Verify(tc.req.Buffer, tc.servant, ks, tc.at); got != tc.want {
			t.Errorf("%s: Verify = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestResponse: the answer AppendResponse writes is what CheckResponse accepts, and anything
// else is refused with ErrAuth.
func TestResponse(t *testing.T) {
	req := &codec.RequestPacket{Version: 1, RequestID: RequestID, MessageType: MessageType, FuncName: FuncName}
	if err := CheckResponse(AppendResponse(nil, req)); err != nil {
		t.Fatalf("answer to a good request: %v", err)
	}
	bad := codec.AppendResponse(nil, &codec.ResponsePacket{Version: 1, RequestID: 1, Ret: -3, ResultDesc: "no such function"})
	if err := CheckResponse(bad); !errors.Is(err, ErrAuth) {
		t.Fatalf("an error answer: %v, want ErrAuth", err)
	}
	if s := StateDecFail.String(); s != "AUTH_DEC_FAIL" {
		t.Fatalf("StateDecFail = %s", s)
	}
}
