package server

import (
	"strconv"

	"github.com/tarscomm/tarscomm/codec"
	"github.com/tarscomm/tarscomm/internal/bigwrite"
	"github.com/tarscomm/tarscomm/internal/bufpool"
)

// maxLarge bounds the large bodies one replies holds: a vectored write through gnet takes at
// most IOV_MAX (1024) slices, two per large body and one more. Beyond it bodies are copied.
const maxLarge = 256

// replies is reply frames waiting to be written to one connection, in order. Their bytes are in
// b, except the bodies of large replies: those stay in the scratch buffer their handler wrote
// them into, which the replies owns until they are written, and are written from there, each
// between b[:at] and b[at:] (a vectored write), instead of being copied into b.
type replies struct {
	b      []byte
	large  []largeBody // by increasing at
	bodies int         // the bytes of large's bodies
	want   int         // while b is nil: the capacity to take from bufpool at the next append (park)
}

// maxIdleReplies is the largest reply buffer a connection keeps between its batches: a larger
// one goes back to bufpool once written (park), so that thousands of idle connections do not
// each hold the size of their largest batch (TarsCpp frees a connection's send buffer once sent).
const maxIdleReplies = 64 << 10

// park gives r's buffer back to bufpool if it is larger than maxIdleReplies, remembering its
// size: the next batch takes one as large from there (ready), a busy connection the same buffer
// again, an idle one none. r holds no frame.
func (r *replies) park() {
	if c := cap(r.b); c > maxIdleReplies {
		bufpool.Put(r.b)
		r.b, r.want = nil, c
	}
}

// ready gives r the buffer park remembered, before frames are appended to it.
func (r *replies) ready() {
	if r.b == nil && r.want > 0 {
		r.b = bufpool.Get(r.want)
		r.want = 0
	}
}

// largeBody is the body of one large reply.
type largeBody struct {
	at   int    // the offset of b its bytes follow
	body []byte // the bytes, within buf
	buf  []byte // the bufpool buffer holding them, given back once they are written
}

// add appends the frame answering req to r, using rp as scratch (see appendReply). A body of at
// least bigwrite.Min that the handler wrote into scratch (the buffer handed to it) is not
// copied: r takes scratch over and add reports true, and the caller must hand the next handler
// a new scratch (scratch.next). A frame above maxPacket is replaced by a RetServerEncode reply
// saying so: a client with the same limit would close the connection on its length, failing
// every call on it (the push and datagram paths refuse theirs alike).
func (r *replies) add(rp *codec.ResponsePacket, req *codec.RequestPacket, ret int32, desc string,
	body []byte, cur *Current, scratch []byte, maxPacket int) (taken bool) {
	r.ready()
	start := len(r.b)
	if len(body) < bigwrite.Min || len(r.large) >= maxLarge || !within(body, scratch) {
		r.b = appendReply(r.b, rp, req, ret, desc, body, cur)
		if n := len(r.b) - start; n > maxPacket {
			r.b = appendReply(r.b[:start], rp, req, codec.RetServerEncode, tooLarge(n, maxPacket), nil, nil)
		}
		return false
	}
	fillResponse(rp, req, ret, desc, body, cur)
	var at int
	r.b, at = codec.AppendResponseAround(r.b, rp)
	rp.Buffer, rp.Context, rp.Status = nil, nil, nil // rp is scratch: it keeps nothing alive
	if n := len(r.b) - start + len(body); n > maxPacket {
		r.b = appendReply(r.b[:start], rp, req, codec.RetServerEncode, tooLarge(n, maxPacket), nil, nil)
		return false
	}
	r.large = append(r.large, largeBody{at: at, body: body, buf: scratch})
	r.bodies += len(body)
	return true
}

// tooLarge is the description of a reply replaced for being n bytes, above max-packet-size.
func tooLarge(n, maxPacket int) string {
	return "server: reply of " + strconv.Itoa(n) + " bytes exceeds max-packet-size " + strconv.Itoa(maxPacket)
}

// within reports whether b lies in the array of buf: the last element of their capacities is
// the same.
func within(b, buf []byte) bool {
	return cap(b) > 0 && cap(buf) > 0 && &b[:cap(b)][cap(b)-1] == &buf[:cap(buf)][cap(buf)-1]
}

// size returns the bytes of r's frames.
func (r *replies) size() int { return len(r.b) + r.bodies }

// vec appends r's frames to v as slices to write in order, and returns the result.
func (r *replies) vec(v [][]byte) [][]byte {
	from := 0
	for _, l := range r.large {
		v = append(v, r.b[from:l.at], l.body)
		from = l.at
	}
	return append(v, r.b[from:])
}

// release gives the buffers of r's large bodies back, once they are written or dropped; r.b
// stays the caller's.
func (r *replies) release() {
	for i, l := range r.large {
		bufpool.Put(l.buf)
		r.large[i] = largeBody{}
	}
	r.large = r.large[:0]
	r.bodies = 0
}

// free gives back all of r's buffers.
func (r *replies) free() {
	r.release()
	bufpool.Put(r.b)
	r.b = nil
}

// shrinkAfter is how many replies in a row must use less than an eighth of a scratch larger
// than maxKeptBuffer before it is given back for a small one: with replies of mixed sizes it
// stays, and large bodies keep being made where they are written from.
const shrinkAfter = 16

// scratch is the buffer handed to handlers for their reply bodies: one per event loop, one per
// worker. A large one is not held while its owner waits for work (park): it goes back to bufpool,
// which gives back what is not taken again, and the next handler gets one as large from there.
type scratch struct {
	b     []byte // nil while parked (want says how large the next one is)
	want  int    // the capacity to take from bufpool at the next use, while b is nil
	small int    // replies in a row that used less than an eighth of a large b
}

func newScratch() scratch { return scratch{b: make([]byte, 0, initialScratch)} }

// buf returns the empty buffer to hand the next handler.
func (s *scratch) buf() []byte {
	if s.b == nil {
		if s.want > 0 {
			s.b = bufpool.Get(s.want) // as large as the one parked or taken over
		} else {
			s.b = make([]byte, 0, initialScratch)
		}
		s.want = 0
	}
	return s.b[:0]
}

// park gives a large buffer back to bufpool while the owner waits for work: an owner that stays
// idle after a huge reply holds none of it (bufpool trims what nobody takes, and keeps nothing
// beyond its budget), and one that goes on with large replies takes it back at the next use.
func (s *scratch) park() {
	if cap(s.b) > maxKeptBuffer {
		bufpool.Put(s.b)
		s.want, s.b = cap(s.b), nil
	}
}

// next makes s ready for the next handler after one made a reply body of used bytes, in s.b or
// elsewhere: one of the same size at the next use if the reply took s.b over (replies.add); a
// larger one if the body did not fit (a handler's returned slice is never kept, as it may alias
// memory the server does not own); a small one again once large buffers went unused for a while.
// Buffers larger than maxKeptBuffer come from bufpool and go back to it.
func (s *scratch) next(used int, taken bool) {
	switch {
	case taken:
		s.b, s.want, s.small = nil, cap(s.b), 0
	case used > cap(s.b):
		bufpool.Put(s.b)
		if used > maxKeptBuffer {
			s.b, s.want = nil, used
		} else {
			s.b = make([]byte, 0, used+used/4)
		}
		s.small = 0
	case cap(s.b) > maxKeptBuffer && used < cap(s.b)/8:
		if s.small++; s.small >= shrinkAfter {
			bufpool.Put(s.b)
			*s = newScratch()
		}
	default:
		s.small = 0
	}
}
