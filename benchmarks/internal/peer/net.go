package peer

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// concreteAddr returns addr with a port 0 replaced by a port that was free a moment ago, for
// servers that cannot report the port they bound.
func concreteAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if port != "0" {
		return addr, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening dials addr until it accepts a connection or limit passes.
func waitListening(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("peer: server on %s not accepting after %v: %w", addr, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tarsEndpoints formats addrs as the endpoint list of a TARS proxy string:
// "tcp -h 127.0.0.1 -p 1000 -t 60000:tcp -h ...".
func tarsEndpoints(addrs []string) (string, error) {
	eps := make([]string, 0, len(addrs))
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return "", err
		}
		if _, err := strconv.Atoi(port); err != nil {
			return "", fmt.Errorf("peer: bad port in %q", a)
		}
		eps = append(eps, fmt.Sprintf("tcp -h %s -p %s -t 60000", host, port))
	}
	return strings.Join(eps, ":"), nil
}

func splitHostPort(addr string) (host, port string, err error) {
	return net.SplitHostPort(addr)
}
