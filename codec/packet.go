package codec

// RequestPacket is a TARS request: the fields of RequestF.tars's
// RequestPacket, at tags 1 to 10. On the wire its fields follow the frame
// header directly, with no struct begin or end around them.
type RequestPacket struct {
	Version     int16             // tag 1: protocol version, VersionTars
	PacketType  int8              // tag 2: PacketNormal or PacketOneway
	MessageType int32             // tag 3: Message* bits
	RequestID   int32             // tag 4: matches the response to the request
	ServantName string            // tag 5: object name, "App.Server.Obj"
	FuncName    string            // tag 6: method name
	Buffer      []byte            // tag 7: encoded parameters (protobuf or TARS)
	Timeout     int32             // tag 8: call timeout in milliseconds
	Context     map[string]string // tag 9: caller context
	Status      map[string]string // tag 10: framework status (dye, trace, ...)
}

// encodedSizeHint estimates the encoded size of p's fixed fields, strings
// and body, so that Encode grows the buffer at most once in common cases.
func (p *RequestPacket) encodedSizeHint() int {
	return 40 + len(p.ServantName) + len(p.FuncName) + len(p.Buffer)
}

// Encode writes every field of p, tags 1 to 10, like TarsGo: empty maps are
// written too, and Buffer as a simple list. It does not allocate beyond
// growing e.Buf.
func (p *RequestPacket) Encode(e *Encoder) {
	b := p.appendHead(grow(e.Buf, p.encodedSizeHint()))
	b = append(appendBytesHead(b, 7, len(p.Buffer)), p.Buffer...)
	e.Buf = p.appendTail(b)
}

// appendHead appends tags 1 to 6.
func (p *RequestPacket) appendHead(b []byte) []byte {
	b = appendInt(b, 1, int64(p.Version))
	b = appendInt(b, 2, int64(p.PacketType))
	b = appendInt(b, 3, int64(p.MessageType))
	b = appendInt(b, 4, int64(p.RequestID))
	b = appendString(b, 5, p.ServantName)
	return appendString(b, 6, p.FuncName)
}

// appendTail appends tags 8 to 10.
func (p *RequestPacket) appendTail(b []byte) []byte {
	b = appendInt(b, 8, int64(p.Timeout))
	b = appendStringMap(b, 9, p.Context)
	return appendStringMap(b, 10, p.Status)
}

// Decode reads p from d, replacing all of p. Tags 1 to 7 are required; 8 to
// 10 are optional (TarsGo's server ignores errors past tag 7). Fields with
// tags above 10 are left unread. Buffer accepts a simple list or a list of
// int8; from a simple list it is a view into d's input, not a copy, and is
// valid only as long as that input is. Empty maps decode as nil. On error
// p's contents are unspecified.
func (p *RequestPacket) Decode(d *Decoder) error {
	err := p.decodeIDs(d)
	if err != nil {
		return err
	}
	if p.ServantName, err = d.ReadString(5, true); err != nil {
		return err
	}
	if p.FuncName, err = d.ReadString(6, true); err != nil {
		return err
	}
	if p.Buffer, err = d.ReadBytesView(7, true); err != nil {
		return err
	}
	if p.Timeout, err = d.ReadInt32(8, false); err != nil {
		return err
	}
	if p.Context, err = d.ReadStringMap(9, false); err != nil {
		return err
	}
	p.Status, err = d.ReadStringMap(10, false)
	return err
}

// ResponsePacket is a TARS response: the fields of RequestF.tars's
// ResponsePacket, at tags 1 to 9.
type ResponsePacket struct {
	Version     int16             // tag 1: protocol version of the request
	PacketType  int8              // tag 2: packet type of the request
	RequestID   int32             // tag 3: id of the request answered
	MessageType int32             // tag 4: Message* bits
	Ret         int32             // tag 5: RetOK or an error code, see RetName
	Buffer      []byte            // tag 6: encoded result (protobuf or TARS)
	Status      map[string]string // tag 7: framework status
	ResultDesc  string            // tag 8: error description, optional
	Context     map[string]string // tag 9: context, optional
}

// Encode writes p: tags 1 to 7 always, as TarsGo's reader requires them;
// Context only when non-empty, as TarsGo does; ResultDesc when non-empty or
// when Ret is not RetOK, even empty: TarsJava's client (v1.7.2 to v1.7.4)
// requires it in every error reply, and TarsJava's servers always write it.
func (p *ResponsePacket) Encode(e *Encoder) {
	b := p.appendHead(grow(e.Buf, 32+len(p.Buffer)+len(p.ResultDesc)))
	e.Buf = p.appendTail(append(b, p.Buffer...))
}

// appendHead appends tags 1 to 5 and the head of tag 6, up to where Buffer's bytes go.
func (p *ResponsePacket) appendHead(b []byte) []byte {
	b = appendInt(b, 1, int64(p.Version))
	b = appendInt(b, 2, int64(p.PacketType))
	b = appendInt(b, 3, int64(p.RequestID))
	b = appendInt(b, 4, int64(p.MessageType))
	b = appendInt(b, 5, int64(p.Ret))
	return appendBytesHead(b, 6, len(p.Buffer))
}

// appendTail appends tags 7 to 9, which follow Buffer's bytes.
func (p *ResponsePacket) appendTail(b []byte) []byte {
	b = appendStringMap(b, 7, p.Status)
	if p.ResultDesc != "" || p.Ret != RetOK {
		b = appendString(b, 8, p.ResultDesc)
	}
	if len(p.Context) > 0 {
		b = appendStringMap(b, 9, p.Context)
	}
	return b
}

// Decode reads p from d, replacing all of p. Tags 1 to 5 are required, 6 to 9
// optional: a response without Buffer or Status decodes with it nil. TarsGo's
// and TarsCpp's readers require 6 and 7 (Encode always writes them), but
// TarsJava's server leaves out a null status, as it is for every tars_ping
// reply, and its reader takes both as optional. Buffer accepts a simple list
// or a list of int8; from a simple list it is a view into d's input, not a
// copy, valid only as long as that input is. Empty maps decode as nil; a
// success reply with empty maps decodes without allocating. On error p's
// contents are unspecified.
func (p *ResponsePacket) Decode(d *Decoder) error {
	err := p.decodeIDs(d)
	if err != nil {
		return err
	}
	if p.MessageType, err = d.ReadInt32(4, true); err != nil {
		return err
	}
	if p.Ret, err = d.ReadInt32(5, true); err != nil {
		return err
	}
	if p.Buffer, err = d.ReadBytesView(6, false); err != nil {
		return err
	}
	if p.Status, err = d.ReadStringMap(7, false); err != nil {
		return err
	}
	if p.ResultDesc, err = d.ReadString(8, false); err != nil {
		return err
	}
	p.Context, err = d.ReadStringMap(9, false)
	return err
}

// decodeIDs reads a request's iVersion, cPacketType, iMessageType and iRequestId (tags 1 to 4).
func (p *RequestPacket) decodeIDs(d *Decoder) error {
	var err error
	if p.Version, err = d.ReadInt16(1, true); err != nil {
		return err
	}
	if p.PacketType, err = d.ReadInt8(2, true); err != nil {
		return err
	}
	if p.MessageType, err = d.ReadInt32(3, true); err != nil {
		return err
	}
	p.RequestID, err = d.ReadInt32(4, true)
	return err
}

// decodeIDs reads a response's iVersion, cPacketType and iRequestId (tags 1 to 3).
func (p *ResponsePacket) decodeIDs(d *Decoder) error {
	var err error
	if p.Version, err = d.ReadInt16(1, true); err != nil {
		return err
	}
	if p.PacketType, err = d.ReadInt8(2, true); err != nil {
		return err
	}
	p.RequestID, err = d.ReadInt32(3, true)
	return err
}
