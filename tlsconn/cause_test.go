package tlsconn

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCauseSilentCloseAfterHandshake: a peer that closes the connection soon after the
// handshake without sending a byte of plaintext (TarsCpp refusing a client certificate) is a TLS
// failure; once plaintext arrived, or past the refusal window (an idle rule's close), the same
// close is the plain error; a close of this side (nil) stays nil; on the server side a client's
// silent close is the plain error.
func TestCauseSilentCloseAfterHandshake(t *testing.T) {
	soon := time.Now().Add(time.Hour) // the refusal window is still open
	for _, closeErr := range []error{io.EOF, fmt.Errorf("read: %w", syscall.ECONNRESET)} {
		late := &LoopConn{s: &Session{addr: "127.0.0.1:1", client: true, refuseBy: time.Now().Add(-time.Millisecond)}}
		if err := late.Cause(closeErr); err != closeErr {
			t.Errorf("silent close (%v) past the refusal window: Cause = %v, want the close's own error", closeErr, err)
		}
		l := &LoopConn{s: &Session{addr: "127.0.0.1:1", client: true, refuseBy: soon}}
		err := l.Cause(closeErr)
		var te *Error
		if !errors.Is(err, ErrTLS) || !errors.As(err, &te) || !errors.Is(err, closeErr) {
			t.Fatalf("silent close (%v): Cause = %v, want an *Error matching ErrTLS and wrapping the close", closeErr, err)
		}
		if !strings.Contains(err.Error(), "right after the handshake") || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("silent close (%v): Cause = %q, want it to say the peer closed right after the handshake, perhaps over the certificate", closeErr, err)
		}

		l.heard = true
		if err := l.Cause(closeErr); err != closeErr {
			t.Errorf("close (%v) after plaintext: Cause = %v, want the close's own error", closeErr, err)
		}
	}
	server := &LoopConn{s: &Session{addr: "127.0.0.1:1"}}
	if err := server.Cause(io.EOF); err != io.EOF {
		t.Errorf("server side, client closed silently: Cause = %v, want io.EOF", err)
	}
	l := &LoopConn{s: &Session{addr: "127.0.0.1:1", client: true, refuseBy: soon}}
	if err := l.Cause(nil); err != nil {
		t.Errorf("local close: Cause = %v, want nil", err)
	}
	pumped := &Error{Addr: "127.0.0.1:1", Op: "read", Err: errors.New("bad record")}
	l.cause = pumped
	if err := l.Cause(io.EOF); err != pumped {
		t.Errorf("after a Pump failure: Cause = %v, want the Pump failure", err)
	}
}
