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
// seen by the side that accepted it: client is its RemoteAddr, server its LocalAddr) was opened by
// a socket of this process. Tests of several packages run at the same time on one machine, and a
// client of another test process may dial a port it used before and that this test now listens
// on: a test that counts connections, bytes or calls counts only those of this process.
//
// It looks the client's socket up in /proc/net/tcp and its inode among /proc/self/fd. Where
// /proc is not there (not Linux) it cannot tell and reports true. A client that has already
// closed its socket is not found (false).
func FromThisProcess(client, server string) bool {
	want, ok := procKey(client, server)
	if !ok {
		return true
	}
	inode, found, err := procInode("/proc/net/tcp", want)
	if err != nil {
		return true // no /proc: cannot tell
	}
	if !found || inode == "0" {
		return false
	}
	return ownsSocket(inode)
}

// procKey returns the "local rem" pair of /proc/net/tcp's columns for the client's socket of the
// connection, or false if an address is not IPv4 host:port.
func procKey(client, server string) (string, bool) {
	c, ok1 := procAddr(client)
	s, ok2 := procAddr(server)
	return c + " " + s, ok1 && ok2
}

// procAddr writes an IPv4 host:port the way /proc/net/tcp does: the address as a 32-bit word in
// host byte order, then the port, both in upper-case hex.
func procAddr(addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	ip := net.ParseIP(host).To4()
	p, err := strconv.ParseUint(port, 10, 16)
	if ip == nil || err != nil {
		return "", false
	}
	return fmt.Sprintf("%08X:%04X", binary.NativeEndian.Uint32(ip), p), true
}

// procInode finds the socket whose "local rem" columns are key in the table file and returns its
// inode.
func procInode(file, key string) (inode string, found bool, err error) {
	f, err := os.Open(file)
	if err != nil {
		return "", false, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		if len(fields) < 10 || fields[1]+" "+fields[2] != key {
			continue
		}
		return fields[9], true, nil
	}
	return "", false, sc.Err()
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
