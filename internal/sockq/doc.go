// Package sockq reads how many bytes the kernel holds in a socket's queues: the bytes sent and
// not yet acknowledged by the peer (Unsent), and the bytes received and not yet read (Unread).
// Both sides use them to tell a peer that is slow from one that is stuck: the client's keepalive
// (adapterproxy), the server's slow-reader rule (server). On systems other than Linux they are 0
// (the queues are not read).
package sockq
