package auth

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/inbound"
)

// maxAnswer bounds the server's answer to an auth request.
const maxAnswer = 64 << 10

// Handshake authenticates the connection nc to servant at addr with cred: it sends the auth
// request and reads the answer, all before deadline, and leaves nc positioned after the answer.
// Every failure matches ErrAuth and names addr; a failed write or read of nc is also returned
// wrapped. nc is not closed.
func Handshake(nc net.Conn, servant, addr string, cred Credentials, deadline time.Time) error {
	fail := func(format string, args ...any) error {
		return &Error{Addr: addr, Err: fmt.Errorf(format, args...)}
	}
	if cred.AccessKey == "" {
		return fail("the endpoint requires authentication (-e 1) but no accesskey and secretkey are configured for %s", servant)
	}
	frame, err := AppendRequest(nil, servant, cred, time.Now())
	if err != nil {
		return fail("%v", err)
	}
	if err := nc.SetDeadline(deadline); err != nil {
		return fail("%v", err)
	}
	defer nc.SetDeadline(time.Time{}) //nolint:errcheck // best effort: the loop owns nc next
	if _, err := nc.Write(frame); err != nil {
		return fail("sending the auth request: %w", err)
	}
	var head [codec.HeaderLen]byte
	if _, err := io.ReadFull(nc, head[:]); err != nil {
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fail("no answer to the auth request before the connect timeout: %w", err)
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return fail("the server closed the connection: it refused access key %q (wrong key, secret or object), or it speaks TLS (declare the endpoint ssl, not tcp)", cred.AccessKey)
		}
		return fail("reading the answer: %w", err)
	}
	n, err := codec.FrameLength(head[:], maxAnswer)
	if err != nil {
		return fail("bad answer: %v", inbound.Foreign(head[:], err))
	}
	answer := make([]byte, n)
	copy(answer, head[:])
	if _, err := io.ReadFull(nc, answer[codec.HeaderLen:]); err != nil {
		return fail("reading the answer: %w", err)
	}
	if err := checkResponse(answer); err != nil {
		return &Error{Addr: addr, Err: err}
	}
	return nil
}

// Error is a failed authentication with the server at Addr. It matches ErrAuth and unwraps to
// the cause.
type Error struct {
	Addr string
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("tars authentication with %s failed: %v", e.Addr, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes an Error match ErrAuth.
func (e *Error) Is(target error) bool { return target == ErrAuth }
