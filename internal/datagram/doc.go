// Package datagram holds the rules of TARS over UDP that the client (adapterproxy) and the
// server (server) share: one datagram carries exactly one frame (the same 4-byte big-endian
// length header and RequestPacket or ResponsePacket as on a stream), and a frame may not exceed
// MaxSize bytes.
//
// TarsCpp reads each datagram into a 64 KiB buffer (TC_Transceiver's DEFAULT_RECV_BUFFERSIZE)
// and sends with one sendto, so a packet that does not fit one datagram is lost there, silently.
// tarscomm refuses such a call before it is sent (ErrTooLarge) and drops, and counts, any received
// datagram that is not exactly one frame (Check).
package datagram
