package faultproxy

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FromThisProcess reports whether the TCP connection from client to server (both "ip:port", as
// seen by the side that accepted it: client is its RemoteAddr, server its LocalAddr; server may be
// "" for any) was opened by a socket of this process. Tests of several packages run at the same time on one machine, and a
// client of another test process may dial a port it used before and that this test now listens
// on: a test that counts connections, bytes or calls counts only those of this process.
//
// It looks the client's socket up in /proc/net/tcp and its inode among /proc/self/fd. Where
// /proc is not there (not Linux) it cannot tell and reports true. A client that has already
// closed its socket (its entry left with no owner, inode 0) cannot be told either, and is not
// called foreign: a short connection of this process does that before a proxy gets to look. A
// connection with no entry at all is not this process's (false).
func FromThisProcess(client, server string) bool {
	// /proc/net/tcp is not a snapshot: a line can be missed while sockets come and go under the
	// read. A socket found is found; one not found is looked for again before it is foreign.
	for range 3 {
		found, err := findSocket(client, server)
		if err != nil {
			return true // no /proc: cannot tell
		}
		if found {
			return true
		}
	}
	return false
}

// findSocket looks for the client's socket of the connection in /proc/net/tcp and tcp6 (where
// a dual-stack socket shows IPv4 addresses mapped into IPv6) and reports whether it is one of
// this process's.
func findSocket(client, server string) (bool, error) {
	var firstErr error
	for _, table := range []struct {
		file string
		v6   bool
	}{{"/proc/net/tcp", false}, {"/proc/net/tcp6", true}} {
		key, ok := procKey(client, server, table.v6)
		if !ok {
			return true, nil // not host:port: cannot tell
		}
		inodes, err := procInodes(table.file, key)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, inode := range inodes {
			if inode == "0" {
				// The client has closed its socket already (FIN_WAIT, TIME_WAIT: no owner left to
				// look at). A short connection of this process does that before the proxy gets
				// to look: cannot tell, so not foreign.
				return true, nil
			}
			if ownsSocket(inode) {
				return true, nil
			}
		}
	}
	if firstErr != nil && !fileExists("/proc/net/tcp") {
		return false, firstErr
	}
	return false, nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// procKey returns the "local rem" pair of /proc/net/tcp's (or tcp6's) columns for the client's
// socket of the connection (rem is "*" when server is ""), or false if an address is not IPv4
// host:port.
func procKey(client, server string, v6 bool) (string, bool) {
	c, ok := procAddr(client, v6)
	if server == "" {
		return c + " *", ok
	}
	s, ok2 := procAddr(server, v6)
	return c + " " + s, ok && ok2
}

// procAddr writes an IPv4 host:port the way /proc/net/tcp does: the address as 32-bit words in
// host byte order (in tcp6, the IPv4-mapped IPv6 address), then the port, in upper-case hex.
func procAddr(addr string, v6 bool) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	ip := net.ParseIP(host)
	p, err := strconv.ParseUint(port, 10, 16)
	if ip == nil || ip.To4() == nil || err != nil {
		return "", false
	}
	b := []byte(ip.To4())
	if v6 {
		b = ip.To16()
	}
	var hexIP strings.Builder
	for i := 0; i < len(b); i += 4 {
		fmt.Fprintf(&hexIP, "%08X", binary.NativeEndian.Uint32(b[i:i+4]))
	}
	return fmt.Sprintf("%s:%04X", hexIP.String(), p), true
}

// procInodes returns the inodes of the sockets whose "local rem" columns are key (rem "*": any)
// in the table file.
func procInodes(file, key string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	local, rem, _ := strings.Cut(key, " ")
	var inodes []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		if len(fields) < 10 || fields[1] != local || (rem != "*" && fields[2] != rem) {
			continue
		}
		inodes = append(inodes, fields[9])
	}
	return inodes, sc.Err()
}

// ownsSocket reports whether one of this process's file descriptors is the socket inode.
func ownsSocket(inode string) bool {
	want := "socket:[" + inode + "]"
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return true
	}
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && l == want {
			return true
		}
	}
	return false
}
