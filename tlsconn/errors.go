package tlsconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrTLS matches, with errors.Is, every failure of TLS itself: a handshake that failed or did
// not complete in time, a certificate the peer or this side rejected, a TLS alert or bad record
// on an established connection.
var ErrTLS = errors.New("tls")

// Error is a TLS failure on the connection to (or from) Addr. It matches ErrTLS, and unwraps to
// the cause (an x509 error, a tls.RecordHeaderError, a net.OpError carrying a TLS alert,
// context.DeadlineExceeded, ...), so errors.As finds it.
type Error struct {
	Addr string // the peer's host:port
	Op   string // "handshake", "read" or "write"
	Hint string // what the cause probably means, for a reader of logs; may be empty
	Err  error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("tls %s with %s failed: %v", e.Op, e.Addr, e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes an Error match ErrTLS.
func (e *Error) Is(target error) bool { return target == ErrTLS }

// handshakeError describes a failed handshake with addr within limit.
func handshakeError(addr string, err error, limit time.Duration) *Error {
	e := &Error{Addr: addr, Op: "handshake", Err: err}
	var (
		unknownCA   x509.UnknownAuthorityError
		invalid     x509.CertificateInvalidError
		hostname    x509.HostnameError
		recordError tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		e.Err = fmt.Errorf("did not complete within %v: %w", limit, context.DeadlineExceeded)
		e.Hint = "the peer accepted the connection but did not answer the handshake; does it speak TLS?"
	case errors.As(err, &unknownCA):
		e.Hint = "the certificate is not signed by a configured ca"
	case errors.As(err, &hostname):
		e.Hint = "the certificate is not for this host; set server-name if the endpoint's -h is not a name in it"
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			e.Hint = "the certificate has expired or is not valid yet"
		}
	case errors.As(err, &recordError):
		e.Hint = "the peer answered with something that is not TLS: it probably speaks plain TCP"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		e.Hint = "the peer closed the connection during the handshake: it may not speak TLS, or it refused this side's certificate"
	case isRemoteAlert(err):
		e.Hint = "the peer refused the handshake: it may require a client certificate (set cert and key) or refuse the one this side sent (its ca, its validity), or share no version or cipher with this side"
	}
	return e
}

// isRemoteAlert reports whether err is a TLS alert the peer sent.
func isRemoteAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// AsFailure returns, for err from an exchange run over an established tls.Conn by its owner
// (TARS authentication, before the connection goes to the loop), an *Error for the TLS failure
// it carries (an alert the peer sent, a record that is not TLS), with that failure as its
// cause; nil when err carries none. With TLS 1.3 the client's handshake ends before the server
// has checked its certificate: a refusal arrives as an alert on the first read.
func AsFailure(addr string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return &Error{Addr: addr, Op: "read", Err: op,
			Hint: "the peer refused the connection: it may require a client certificate (set cert and key), or refuse this one"}
	}
	var rec tls.RecordHeaderError
	if errors.As(err, &rec) {
		return &Error{Addr: addr, Op: "read", Err: rec, Hint: "the peer sent something that is not TLS"}
	}
	return nil
}

// isTLSFailure reports whether err, from reading or writing an established tls.Conn, is a
// failure of TLS (an alert, a bad record) rather than the connection ending or being closed.
func isTLSFailure(err error) bool {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return false
	}
	var rec tls.RecordHeaderError
	return isRemoteAlert(err) || errors.As(err, &rec) || strings.HasPrefix(err.Error(), "tls: ") || strings.Contains(err.Error(), "local error: tls")
}
